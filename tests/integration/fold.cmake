# The folding rule on real models: check_fold.c folds real reports (test_fold.sh writes them) at
# every depth and checks that every additive figure still adds up. It reads the core's tree, so
# it links the core (no libtorch); the reports come from the CLI against the real libtorch.
add_executable(check_fold ${CMAKE_CURRENT_SOURCE_DIR}/check_fold.c)
target_compile_options(check_fold PRIVATE ${LP_WARNINGS})
target_link_libraries(check_fold PRIVATE lp_core)
set(_lp_fold_args $<TARGET_FILE:layerprof> $<TARGET_FILE:check_fold> ${LP_MODELS_DIR})
if(LP_TORCH_VERSION VERSION_GREATER_EQUAL 2)
  list(APPEND _lp_fold_args ${CMAKE_CURRENT_BINARY_DIR}/pt2)
endif()
add_test(NAME integration.fold COMMAND ${LP_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/test_fold.sh
                                       ${_lp_fold_args})
set_tests_properties(integration.fold PROPERTIES LABELS integration TIMEOUT ${LP_TEST_TIMEOUT})
if(LP_TORCH_VERSION VERSION_GREATER_EQUAL 2)
  set_tests_properties(integration.fold PROPERTIES FIXTURES_REQUIRED pt2_packages)
endif()

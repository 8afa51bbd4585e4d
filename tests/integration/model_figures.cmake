# What each module is (params, bytes, FLOPs): test_model_figures.c, exact figures on resnet18 and
# pat_shared worked out from their definitions (docs/model-figures.md).
add_executable(test_model_figures ${CMAKE_CURRENT_SOURCE_DIR}/test_model_figures.c)
target_compile_options(test_model_figures PRIVATE ${LP_WARNINGS})
target_compile_definitions(test_model_figures PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}")
target_link_libraries(test_model_figures PRIVATE liblayerprof PkgConfig::CMOCKA)
if(TARGET models)
  add_dependencies(test_model_figures models)
endif()
add_test(NAME integration.model_figures COMMAND test_model_figures)
set_tests_properties(integration.model_figures PROPERTIES LABELS integration TIMEOUT ${LP_TEST_TIMEOUT})

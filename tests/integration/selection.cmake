# Path selection, op rows and input shapes (docs/events-and-paths.md). Included from
# tests/integration/CMakeLists.txt, which defines LP_MODELS_DIR and finds cmocka and jansson.

add_executable(test_selection ${CMAKE_CURRENT_SOURCE_DIR}/test_selection.c)
target_compile_options(test_selection PRIVATE ${LP_WARNINGS})
target_compile_definitions(test_selection PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}")
target_link_libraries(test_selection PRIVATE liblayerprof PkgConfig::CMOCKA)
if(TARGET models)
  add_dependencies(test_selection models)
endif()

add_test(NAME integration.selection COMMAND test_selection $<TARGET_FILE:layerprof>)
set_tests_properties(integration.selection PROPERTIES
                     LABELS integration
                     TIMEOUT ${LP_TEST_TIMEOUT}
                     ENVIRONMENT "LP_MODELS_DIR=${LP_MODELS_DIR}")

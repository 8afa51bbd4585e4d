# Regions, contexts, steps and schedules (test_regions_api.c), and the regions example program run as a
# user would run it (test_regions_example.sh).
add_executable(test_regions_api ${CMAKE_CURRENT_SOURCE_DIR}/test_regions_api.c)
target_compile_options(test_regions_api PRIVATE ${LP_WARNINGS})
target_compile_definitions(test_regions_api PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}")
target_link_libraries(test_regions_api PRIVATE liblayerprof PkgConfig::CMOCKA PkgConfig::JANSSON m)
if(TARGET models)
  add_dependencies(test_regions_api models)
endif()
add_test(NAME integration.regions COMMAND test_regions_api)
add_test(NAME integration.regions_example
         COMMAND ${LP_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/test_regions_example.sh
                 $<TARGET_FILE:regions> ${LP_MODELS_DIR})
set_tests_properties(integration.regions integration.regions_example PROPERTIES
                     LABELS integration TIMEOUT ${LP_TEST_TIMEOUT})

# What getters hand out stays valid until lp_session_close, through recompositions
# (test_getter_lifetimes.c; the sanitizer build catches a dangling pointer at once).
add_executable(test_getter_lifetimes ${CMAKE_CURRENT_SOURCE_DIR}/test_getter_lifetimes.c)
target_compile_options(test_getter_lifetimes PRIVATE ${LP_WARNINGS})
target_compile_definitions(test_getter_lifetimes PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}")
target_link_libraries(test_getter_lifetimes PRIVATE liblayerprof PkgConfig::CMOCKA)
if(TARGET models)
  add_dependencies(test_getter_lifetimes models)
endif()
add_test(NAME integration.getter_lifetimes COMMAND test_getter_lifetimes)
set_tests_properties(integration.getter_lifetimes PROPERTIES LABELS integration TIMEOUT ${LP_TEST_TIMEOUT})

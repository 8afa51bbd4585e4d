# Export tests (issue 9), included from tests/integration/CMakeLists.txt: every format from real
# runs through the API (test_exports.c), the CLI's --format/--output/--trace and `layerprof diff`
# (test_exports_cli.sh), and the HTML view in headless Chromium (tests/html/test_html.py, skipped
# with a reason when Chromium, chromedriver or Selenium are missing: scripts/setup.sh installs them).

add_executable(test_exports ${CMAKE_CURRENT_LIST_DIR}/test_exports.c)
target_compile_options(test_exports PRIVATE ${LP_WARNINGS})
target_compile_definitions(test_exports PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}")
target_link_libraries(test_exports PRIVATE liblayerprof PkgConfig::CMOCKA PkgConfig::JANSSON m)
if(TARGET models)
  add_dependencies(test_exports models)
endif()
add_test(NAME integration.exports COMMAND test_exports)

add_test(NAME integration.exports_cli
         COMMAND ${LP_BASH} ${CMAKE_CURRENT_LIST_DIR}/test_exports_cli.sh $<TARGET_FILE:layerprof>
                 ${LP_MODELS_DIR} ${CMAKE_CURRENT_BINARY_DIR}/exports_cli)

# The HTML view: the venv scripts/setup.sh makes (.deps/selenium), else any python3 with selenium.
set(LP_SELENIUM_PYTHON "${CMAKE_SOURCE_DIR}/.deps/selenium/bin/python" CACHE FILEPATH
    "Python with Selenium, for the headless-Chromium test of the HTML view")
find_program(LP_PYTHON3 python3)
if(EXISTS "${LP_SELENIUM_PYTHON}")
  set(lp_html_python "${LP_SELENIUM_PYTHON}")
else()
  set(lp_html_python "${LP_PYTHON3}")
endif()
add_test(NAME integration.exports_html
         COMMAND ${LP_BASH} ${CMAKE_SOURCE_DIR}/tests/html/run_html_test.sh "${lp_html_python}"
                 $<TARGET_FILE:layerprof> ${LP_MODELS_DIR} ${CMAKE_CURRENT_BINARY_DIR}/exports_html)

set_tests_properties(integration.exports integration.exports_cli integration.exports_html
                     PROPERTIES LABELS integration TIMEOUT ${LP_TEST_TIMEOUT} SKIP_RETURN_CODE 77
                     ENVIRONMENT "LP_MODELS_DIR=${LP_MODELS_DIR}")

# examples/serve.cpp (layerprof-serve), built where libmicrohttpd is (examples/CMakeLists.txt):
# run as a user would (examples.serve), and scraped by a real Prometheus (integration.prometheus,
# skipped with the reason where Debian's prometheus is not installed). Both on models/nested.pt.
if(TARGET layerprof-serve)
  set(lp_serve_args $<TARGET_FILE:layerprof-serve> ${LP_MODELS_DIR}/nested.pt 1x3x16x16)
  add_test(NAME examples.serve
           COMMAND ${LP_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_serve_example.py ${lp_serve_args})
  add_test(NAME integration.prometheus
           COMMAND ${LP_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_prometheus.py ${lp_serve_args})
  # Two instances, one slower, one Prometheus: the fleet queries of docs/production.md.
  add_test(NAME integration.prometheus_fleet
           COMMAND ${LP_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_prometheus_fleet.py ${lp_serve_args})
  # RESOURCE_LOCK: each picks a free port, closes it and has a server bind it later (serve_util):
  # with two of them side by side under ctest -j, one could take the other's port between.
  # prometheus_fleet's replicas are judged against each other, so it runs alone.
  set_tests_properties(examples.serve integration.prometheus integration.prometheus_fleet PROPERTIES
                       LABELS "integration" TIMEOUT ${LP_TEST_TIMEOUT} SKIP_RETURN_CODE 77
                       RESOURCE_LOCK ports)
  set_tests_properties(integration.prometheus_fleet PROPERTIES RUN_SERIAL TRUE)
endif()

# `layerprof merge` and --label from the command line (test_merge.sh), with the multi-process
# example (examples/rank_report.c, examples/fleet_ranks.sh) naming its straggler rank.
add_test(NAME integration.merge
         COMMAND ${LP_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/test_merge.sh $<TARGET_FILE:layerprof>
                 $<TARGET_FILE:rank_report> ${CMAKE_SOURCE_DIR}/examples/fleet_ranks.sh
                 ${LP_MODELS_DIR})
# RUN_SERIAL: the straggler must be the only slow rank; another test's load would slow others.
set_tests_properties(integration.merge PROPERTIES LABELS integration TIMEOUT ${LP_TEST_TIMEOUT}
                     RUN_SERIAL TRUE
                     ENVIRONMENT "LP_PYTHON=${LP_PYTHON}")

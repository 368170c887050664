# hysimd, the simulation daemon (hysimd.h): included by bridge/CMakeLists.txt.
#
#   hysim_daemon_obj  the daemon's objects; tests link them against test doubles
#   hysim_daemon      the static library, linked to hysim_bridge, hysim_scenario
#                     and hysim_fabric (ns3-glue/, defined after bridge/: linked
#                     at the end of the top-level directory, when it exists)
if(NOT TARGET hysim_bridge)
  return() # frame.c / transport_unix.c are not there yet
endif()

set(HS_DAEMON_SOURCES daemon_util.c hysimd.c session.c timeline.c collective.c collective_algos.c collective_tuner.c sim_clock.c stall.c kernel_time.c kernel_defaults.c gemm_model.c gemm_dtype.c profile_db.c run_stats.c
    background.c stats_output.c speculate.c comm_split.c fabric_speculation.c)
list(TRANSFORM HS_DAEMON_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)

add_library(hysim_daemon_obj OBJECT ${HS_DAEMON_SOURCES})
target_include_directories(hysim_daemon_obj PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(hysim_daemon_obj PUBLIC hysim_bridge)

add_library(hysim_daemon STATIC $<TARGET_OBJECTS:hysim_daemon_obj>)
target_include_directories(hysim_daemon PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(hysim_daemon PUBLIC hysim_bridge)
if(TARGET hysim_scenario)
  target_link_libraries(hysim_daemon PUBLIC hysim_scenario)
endif()

function(hs_daemon_link_fabric)
  if(TARGET hysim_fabric)
    target_link_libraries(hysim_daemon PUBLIC hysim_fabric)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL hs_daemon_link_fabric)

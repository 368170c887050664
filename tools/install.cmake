# `cmake --install BUILD --prefix PREFIX`: the command line in PREFIX/bin, the
# replacement CUDA/NCCL libraries in PREFIX/lib/hysim (never in lib/ itself,
# where they would shadow a real CUDA install; hysim finds them relative to its
# own location), the public headers and the scenario library's static archive,
# a pkg-config file, and the shipped scenarios in PREFIX/share/hysim/scenarios.
include(GNUInstallDirs)

install(TARGETS hysim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(lib hysim_client hysim_cudart hysim_cuda hysim_nccl hysim_cublas hysim_cublaslt hysim_curand hysim_cudnn hysim_nvml hysim_audit
            hysim_profile) # hysim_profile: only with CUPTI
  if(TARGET ${lib})
    install(TARGETS ${lib} LIBRARY DESTINATION lib/hysim NAMELINK_SKIP) # bin/../lib/hysim: launcher.c
  endif()
endforeach()
if(TARGET hysim_scenario)
  install(TARGETS hysim_scenario ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/hysim DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/hysim/scenarios
        FILES_MATCHING PATTERN "*.yaml" PATTERN "README.md")
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/REPORT.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/hysim)
install(FILES ${HYSIM_KERNEL_DATABASES} DESTINATION ${CMAKE_INSTALL_DATADIR}/hysim/profiles)

# prefix relative to the .pc file, so that `cmake --install --prefix` anywhere works
file(RELATIVE_PATH HS_PC_TO_PREFIX /hs/${CMAKE_INSTALL_LIBDIR}/pkgconfig /hs)
string(REGEX REPLACE "/$" "" HS_PC_TO_PREFIX "${HS_PC_TO_PREFIX}") # "../../" would make "../..//share"
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/hysim.pc.in ${CMAKE_CURRENT_BINARY_DIR}/hysim.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/hysim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

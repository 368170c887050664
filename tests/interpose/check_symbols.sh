#!/usr/bin/env bash
# Checks what the replacement libraries export, against the real headers.
# usage: check_symbols.sh MODE LIBDIR CUDA_INCLUDE [CLIENT_TEST]
#   cudart  libcudart.so.13: soname, every exported symbol versioned libcudart.so.13,
#           the nvcc 13 hooks and the implemented API present, and every symbol
#           the real libcudart.so.13 exports but the graphics interop
#   nccl    libnccl.so.2: every function nccl.h declares is exported, unversioned
#   hysim   libhysim.so: only hs_client_*, the clock functions, pthread_create /
#           pthread_join / pthread_timedjoin_np / pthread_clockjoin_np and the
#           condition variable, barrier and semaphore calls of host_sync.c and the
#           mutex and rwlock calls of mutex.c and rwlock.c, unversioned
#   cuda    libcuda.so.1: the driver calls hysim implements and a stub for every
#           other function of cuda.h and of CUDA's link stub libcuda.so, unversioned
#   curand  libcurand.so.10: exactly the functions and versions the real one
#           (CUDA_INCLUDE/../lib64/libcurand.so.10) exports
#   errors  cudaGetErrorName knows exactly driver_types.h's cudaError values
#           (runs CLIENT_TEST error_names)
set -uo pipefail
mode=$1 libdir=$2 inc=$3
fail=0
check() { echo "FAIL: $*"; fail=1; }

# Defined dynamic symbols as "VERSION NAME" (VERSION "Base" or "" when unversioned), in any section
# (libcuda.so.1's generated stubs lie in one of their own, hs_driver_stubs).
exports() {
  objdump -T "$1" | awk '$0 !~ /\*UND\*/ && ($2 == "g" || $2 == "w") && $4 !~ /^\*/ {
    if (NF == 7) print $6, $7; else print "-", $NF }'
}
soname() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'; }
has_verdef() { readelf -V "$1" | grep -q "Version definition section"; }

case $mode in
cudart)
  lib=$libdir/libcudart.so.13
  [[ $(soname "$lib") == libcudart.so.13 ]] || check "soname is $(soname "$lib")"
  exports "$lib" >"${TMPDIR:-/tmp}/cudart.$$"
  n=$(wc -l <"${TMPDIR:-/tmp}/cudart.$$")
  ((n > 40)) || check "only $n exported symbols"
  while read -r ver name; do
    [[ $ver == libcudart.so.13 ]] || check "$name has version '$ver', not libcudart.so.13"
    [[ $name == cuda* || $name == __cuda* ]] || check "unexpected export $name"
  done <"${TMPDIR:-/tmp}/cudart.$$"
  for f in __cudaRegisterFatBinary __cudaRegisterFatBinaryEnd __cudaRegisterFunction \
           __cudaUnregisterFatBinary __cudaGetKernel __cudaInitModule __cudaLaunchKernel \
           __cudaPushCallConfiguration __cudaPopCallConfiguration \
           cudaGetDeviceCount cudaSetDevice cudaGetDevice cudaGetDeviceProperties cudaDeviceGetAttribute \
           cudaMalloc cudaFree cudaMemGetInfo cudaMallocHost cudaFreeHost cudaHostAlloc \
           cudaMemcpy cudaMemcpyAsync cudaMemset cudaMemsetAsync \
           cudaStreamCreate cudaStreamCreateWithFlags cudaStreamCreateWithPriority cudaStreamDestroy \
           cudaStreamSynchronize cudaStreamQuery cudaStreamWaitEvent \
           cudaEventCreate cudaEventCreateWithFlags cudaEventRecord cudaEventSynchronize cudaEventQuery \
           cudaEventElapsedTime cudaEventDestroy cudaDeviceSynchronize cudaDeviceReset \
           cudaGetLastError cudaPeekAtLastError cudaGetErrorString cudaGetErrorName \
           cudaRuntimeGetVersion cudaDriverGetVersion cudaLaunchKernel; do
    grep -qx "libcudart.so.13 $f" "${TMPDIR:-/tmp}/cudart.$$" || check "$f is not exported as libcudart.so.13 $f"
    grep -Eq "[ *]$f\(" "$inc/cuda_runtime_api.h" "$inc/crt/host_runtime.h" "$inc/crt/device_functions.h" ||
      check "$f is not declared in the CUDA 13 headers"
  done
  # Against the real library, where the toolkit has it: only the graphics interop
  # (cuda_gl/egl/vdpau_interop.h) and three hooks nvcc 13 does not emit may be absent.
  real=$inc/../lib64/libcudart.so.13
  if [[ -f $real ]]; then
    while read -r ver name; do
      [[ $name =~ ^(cuda(GL|EGL|VDPAU|GraphicsGL|GraphicsEGL|GraphicsVDPAU)|cudaEventCreateFromEGLSync$|cudaGraphicsResourceGetMappedEglFrame$|__cudaGetProcAddress$|__cudaRegisterHostVar$|__cudaRegisterUnifiedTable$) ]] &&
        continue
      grep -qx "libcudart.so.13 $name" "${TMPDIR:-/tmp}/cudart.$$" || check "$name (real libcudart.so.13) is not exported"
    done < <(exports "$real")
  fi
  rm -f "${TMPDIR:-/tmp}/cudart.$$"
  ;;
nccl)
  lib=$libdir/libnccl.so.2
  [[ $(soname "$lib") == libnccl.so.2 ]] || check "soname is $(soname "$lib")"
  has_verdef "$lib" && check "libnccl.so.2 defines symbol versions; NCCL's symbols are unversioned"
  # Function declarations of nccl.h, comments stripped: "TYPE [*]NAME(".
  declared=$(gcc -fpreprocessed -dD -E -P "$inc/nccl.h" 2>/dev/null |
             grep -oE '^(ncclResult_t|const char\*|void)[[:space:]]+p?nccl[A-Za-z0-9_]+[[:space:]]*\(' |
             sed -E 's/.*[[:space:]](p?nccl[A-Za-z0-9_]+)[[:space:]]*\($/\1/' | sort -u)
  n=$(wc -w <<<"$declared")
  ((n >= 80)) || check "parsed only $n functions from nccl.h"
  # The device communicators' host calls (nccl_device/core.h, C++): PyTorch links them.
  device_comm=$(grep -ohE 'ncclDevComm(Create|Destroy)[[:space:]]*\(' "$inc"/nccl_device/core.h | tr -d '( ' | sort -u)
  [[ $(wc -w <<<"$device_comm") == 2 ]] || check "nccl_device/core.h: ncclDevCommCreate/Destroy not found"
  exported=$(exports "$lib" | awk '{print $2}' | sort -u)
  for f in $declared $device_comm; do
    grep -qx "$f" <<<"$exported" || check "$f (nccl.h) is not exported"
  done
  for f in $exported; do
    grep -qx "$f" <<<"$declared"$'\n'"$device_comm" || check "$f is exported but not in nccl.h"
  done
  echo "nccl.h declares $n functions, nccl_device/core.h 2 host calls"
  ;;
hysim)
  lib=$libdir/libhysim.so
  has_verdef "$lib" && check "libhysim.so defines symbol versions; its clock functions must be unversioned"
  exported=$(exports "$lib" | awk '{print $2}')
  sync_calls="pthread_cond_wait pthread_cond_signal pthread_cond_broadcast pthread_barrier_init pthread_barrier_destroy pthread_barrier_wait sem_wait sem_post"
  sync_calls+=" pthread_mutex_lock pthread_mutex_unlock pthread_rwlock_rdlock pthread_rwlock_wrlock pthread_rwlock_unlock"
  sync_calls+=" syscall" # futex waits and wakes (futex.c)
  sync_calls+=" pthread_spin_init pthread_spin_destroy pthread_spin_lock pthread_spin_unlock" # spinlock.c
  sync_calls+=" GOMP_parallel GOMP_parallel_sections GOMP_parallel_loop_static GOMP_parallel_loop_dynamic"
  sync_calls+=" GOMP_parallel_loop_guided GOMP_parallel_loop_runtime GOMP_barrier GOMP_loop_end GOMP_sections_end"
  sync_calls+=" GOMP_critical_start GOMP_critical_end GOMP_critical_name_start GOMP_critical_name_end"
  sync_calls+=" omp_init_lock omp_init_nest_lock omp_destroy_lock omp_destroy_nest_lock omp_set_lock omp_unset_lock"
  sync_calls+=" omp_set_nest_lock omp_unset_nest_lock omp_test_lock omp_test_nest_lock omp_init_lock_with_hint"
  sync_calls+=" omp_init_nest_lock_with_hint" # openmp.c
  sleep_calls="nanosleep clock_nanosleep usleep sleep select poll sched_yield"
  name_calls="gethostname uname" # host_name.c
  timed_calls="pthread_cond_timedwait pthread_cond_clockwait sem_timedwait sem_clockwait pthread_mutex_timedlock pthread_mutex_clocklock"
  timed_calls+=" pthread_rwlock_timedrdlock pthread_rwlock_timedwrlock pthread_rwlock_clockrdlock pthread_rwlock_clockwrlock"
  io_calls="ppoll pselect epoll_wait epoll_pwait accept accept4 recv recvfrom recvmsg read readv write writev send sendto sendmsg" # host_io.c
  sync_calls+=" $sleep_calls $timed_calls $io_calls $name_calls"
  for f in clock_gettime gettimeofday time pthread_create pthread_join pthread_timedjoin_np pthread_clockjoin_np $sync_calls; do
    grep -qx "$f" <<<"$exported" || check "$f is not exported"
  done
  for f in $exported; do
    [[ $f == hs_client_* || $f == hs_values_* || $f =~ ^(clock_gettime|gettimeofday|time|timespec_get|pthread_create|pthread_join|pthread_timedjoin_np|pthread_clockjoin_np)$ ||
       " $sync_calls " == *" $f "* ]] ||
      check "unexpected export $f"
  done
  ;;
cuda)
  lib=$libdir/libcuda.so.1
  [[ $(soname "$lib") == libcuda.so.1 ]] || check "soname is $(soname "$lib")"
  has_verdef "$lib" && check "libcuda.so.1 defines symbol versions"
  exported=$(exports "$lib" | awk '{print $2}' | sort)
  n=$(wc -l <<<"$exported")
  ((n > 600)) || check "only $n exports"
  for f in cuDeviceGet cuDeviceGetAttribute cuDeviceGetCount cuDeviceGetName cuDeviceTotalMem cuDeviceTotalMem_v2 \
           cuDriverGetVersion cuGetErrorName cuGetErrorString cuGetProcAddress cuGetProcAddress_v2 cuInit \
           cuMemAlloc_v2 cuMemAlloc cuLaunchKernel cuGetExportTable cuCtxGetCurrent cuStreamWaitValue32_ptsz; do
    grep -qx "$f" <<<"$exported" || check "$f not exported"
  done
  grep -v '^cu[A-Z]' <<<"$exported" | grep -q . && check "exports other than cu*: $(grep -v '^cu[A-Z]' <<<"$exported" | head -3)"
  echo "$n driver functions exported"
  ;;
curand)
  lib=$libdir/libcurand.so.10 real=$(dirname "$inc")/lib64/libcurand.so.10
  [[ $(soname "$lib") == libcurand.so.10 ]] || check "soname is $(soname "$lib")"
  [[ -f $real ]] || check "no real $real to compare with"
  ours=$(exports "$lib" | sort | tr '\n' ' ')
  theirs=$(exports "$real" | awk '$2 ~ /^curand/' | sort | tr '\n' ' ')
  [[ $ours == "$theirs" ]] || check "exports differ from the real library's: $(diff <(tr ' ' '\n' <<<"$ours") <(tr ' ' '\n' <<<"$theirs") | head -20)"
  echo "$(wc -w <<<"$ours") words, as the real libcurand.so.10"
  ;;
errors)
  want=$(awk '/^enum __device_builtin__ cudaError$/,/^};/' "$inc/driver_types.h" |
         grep -oE '^[[:space:]]+cuda(Success|Error[A-Za-z0-9_]*)[[:space:]]*=[[:space:]]*[0-9]+' |
         awk '{print $1, $3}' | sort)
  got=$(LD_LIBRARY_PATH=$libdir LD_PRELOAD=${HS_TEST_PRELOAD:-} "$4" error_names | sort)
  n=$(wc -l <<<"$want")
  ((n > 100)) || check "parsed only $n cudaError values"
  [[ $want == "$got" ]] || check "cudaGetErrorName differs from driver_types.h: $(diff <(echo "$want") <(echo "$got") | head -20)"
  echo "driver_types.h has $n cudaError values"
  ;;
*)
  echo "usage: check_symbols.sh cudart|nccl|hysim|cuda|curand|errors LIBDIR CUDA_INCLUDE [CLIENT_TEST]" >&2
  exit 2
  ;;
esac
((fail)) && exit 1
echo "ok"

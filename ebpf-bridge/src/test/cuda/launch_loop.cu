// Test target for the eBPF bridge: pushes llmlat NVTX step ranges and launches a known number of
// kernels inside each, on several threads. No GPU needed: every launch still enters
// cudaLaunchKernel in the shared libcudart and fails there with "no device".
//
//   launch_loop steps <threads> <ranges per thread> <launches per range> [sleep us between ranges]
//       prints {"start_unix_ns":..} first, one {"tid":..,"range":..,"text":..,"launches":..} per range,
//       and {"end_unix_ns":..} last; every range ends with cudaStreamSynchronize(0).
//   launch_loop bench <launches>
//       prints {"phase":1,"launches_per_s":..}, waits for a line on stdin (the bridge attaches by
//       pid meanwhile), then prints {"phase":2,"launches_per_s":..}.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>
#include <sys/syscall.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void llmlat_test_kernel(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = out[i] * 2.0f + 1.0f;
}

static long long unix_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double mono_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void hex(char *out, unsigned long long a, unsigned long long b) {
  snprintf(out, 33, "%016llx%016llx", a, b);
}

// Trace ids are a deterministic function of (thread, range) so the test can recompute them.
static std::string step_text(int thread, int range) {
  char t1[33], t2[33], step[17];
  unsigned long long base = 0x1000ULL * (thread + 1) + range + 1;
  hex(t1, 0xaaaa000000000000ULL | base, base);
  hex(t2, 0xbbbb000000000000ULL | base, base);
  snprintf(step, sizeof step, "%016llx", 0xcccc000000000000ULL | base);
  return std::string("llmlat step=") + step + " kind=" + (range % 2 == 0 ? "prefill" : "decode") +
         " traces=" + t1 + "," + t2;
}

static void steps_thread(int thread, int ranges, int launches, int sleep_us, std::vector<std::string> *log) {
  long tid = syscall(SYS_gettid);
  for (int r = 0; r < ranges; r++) {
    std::string text = step_text(thread, r);
    nvtxRangePushA(text.c_str());
    for (int k = 0; k < launches; k++) {
      llmlat_test_kernel<<<dim3(4 + r, 2, 1), dim3(128, 1, 1)>>>(nullptr, 0);
    }
    cudaStreamSynchronize(0);
    nvtxRangePop();
    char line[512];
    snprintf(line, sizeof line, "{\"tid\":%ld,\"thread\":%d,\"range\":%d,\"text\":\"%s\",\"launches\":%d}",
             tid, thread, r, text.c_str(), launches);
    log->push_back(line);
    if (sleep_us > 0) usleep(sleep_us);
  }
}

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc >= 5 && strcmp(argv[1], "steps") == 0) {
    int threads = atoi(argv[2]), ranges = atoi(argv[3]), launches = atoi(argv[4]);
    int sleep_us = argc >= 6 ? atoi(argv[5]) : 0;
    printf("{\"pid\":%d,\"start_unix_ns\":%lld}\n", getpid(), unix_ns());
    std::vector<std::vector<std::string>> logs(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; t++) workers.emplace_back(steps_thread, t, ranges, launches, sleep_us, &logs[t]);
    for (auto &w : workers) w.join();
    long long end = unix_ns();
    for (auto &l : logs) for (auto &s : l) printf("%s\n", s.c_str());
    printf("{\"end_unix_ns\":%lld}\n", end);
    // Stay alive briefly so the bridge can still read /proc/PID/maps for symbol names.
    usleep(300 * 1000);
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "bench") == 0) {
    long n = atol(argv[2]);
    for (int phase = 1; phase <= 2; phase++) {
      if (phase == 2) {
        printf("{\"ready\":true,\"pid\":%d}\n", getpid());
        char buf[16];
        if (!fgets(buf, sizeof buf, stdin)) return 2;
      }
      llmlat_test_kernel<<<1, 1>>>(nullptr, 0);  // warm up: first call initialises the runtime
      double t0 = mono_s();
      for (long i = 0; i < n; i++) llmlat_test_kernel<<<1, 32>>>(nullptr, 0);
      double dt = mono_s() - t0;
      printf("{\"phase\":%d,\"launches\":%ld,\"seconds\":%.6f,\"launches_per_s\":%.1f}\n", phase, n, dt, n / dt);
    }
    // bpftrace exits as soon as the target does, dropping events still in its buffers: linger.
    usleep(500 * 1000);
    return 0;
  }
  fprintf(stderr, "usage: %s steps <threads> <ranges> <launches> | bench <launches>\n", argv[0]);
  return 64;
}

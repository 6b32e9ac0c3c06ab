package dev.llmlat.gpu.internal;

/**
 * What the store can hold, checked where exports are parsed: times are Unix ns in a signed long
 * (OTLP's fixed64 read as Java longs, ClickHouse's DateTime64(9): 1970 to 2262-04-11), device and
 * stream ids the widths of {@code gpu_kernels} (schemas/clickhouse/0002_gpu_kernels.sql). A value
 * outside is refused, never wrapped: ClickHouse would store 70000 as device 4464, 2^63 ns as 1900.
 */
final class Limits {
  /** {@code gpu_kernels.Device UInt16}. */
  static final long DEVICE_MAX = 0xFFFF;

  /** {@code gpu_kernels.Stream UInt32}; also Pid and Tid. */
  static final long UINT32_MAX = 0xFFFF_FFFFL;

  static final String PAST_2262 = "is past year 2262 (Unix ns overflow)";
  static final String BEFORE_1970 = "is before 1970 (negative Unix ns)";

  private Limits() {}

  static String device(long value) {
    return value + " does not fit gpu_kernels.Device (UInt16: 0 to 65535)";
  }

  static String stream(long value) {
    return value + " does not fit gpu_kernels.Stream (UInt32: 0 to 4294967295)";
  }

  static boolean fitsDevice(long value) {
    return (value & ~DEVICE_MAX) == 0;
  }

  static boolean fitsUint32(long value) {
    return (value & ~UINT32_MAX) == 0;
  }
}

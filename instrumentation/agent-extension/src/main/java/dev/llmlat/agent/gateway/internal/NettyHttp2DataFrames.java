package dev.llmlat.agent.gateway.internal;

import io.netty.handler.codec.http2.Http2DataFrame;

/**
 * The DATA frames a server writes on an HTTP/2 stream's channel itself, past the stream's HTTP/1.x
 * codec (which passes frames on unchanged). Loaded only for HTTP/2 stream channels: the gateway may
 * have no {@code netty-codec-http2}.
 */
final class NettyHttp2DataFrames {
  private NettyHttp2DataFrames() {}

  static boolean isDataFrame(Object msg) {
    return msg instanceof Http2DataFrame;
  }

  /** {@code msg}, a DATA frame, is the stream's last from this side. */
  static boolean endsStream(Object msg) {
    return ((Http2DataFrame) msg).isEndStream();
  }
}

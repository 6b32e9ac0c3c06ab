package dev.llmlat.agent.gateway.internal;

import dev.llmlat.semconv.LlmlatAttributes;
import io.netty.channel.Channel;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2RemoteFlowController;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.handler.codec.http2.Http2StreamChannel;

/**
 * What holds back the writes of an HTTP/2 stream's child channel (Netty's {@code
 * Http2MultiplexHandler}: one channel per stream, unwritable while more of its bytes wait to leave
 * than its write buffer's high-water mark). Netty's remote flow controller writes a stream's DATA
 * only within the stream's flow-control window and the connection's, and only while the connection
 * channel is writable; an exhausted window (0 left: the client has granted no more with {@code
 * WINDOW_UPDATE}) is what holds the bytes, otherwise the connection's socket is. Loaded only for
 * HTTP/2 stream channels: the gateway may have no {@code netty-codec-http2}.
 */
final class NettyHttp2Windows {
  private NettyHttp2Windows() {}

  /**
   * A {@link LlmlatAttributes#GATEWAY_BACKPRESSURE_CAUSE} value for {@code channel} now: {@code
   * socket} unless it is a stream of a connection whose {@code Http2FrameCodec} shows the stream's
   * or the connection's window exhausted (the stream's first).
   */
  static String cause(Channel channel) {
    Channel connection = channel.parent();
    if (!(channel instanceof Http2StreamChannel) || connection == null) {
      return LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_SOCKET;
    }
    Http2FrameCodec codec = connection.pipeline().get(Http2FrameCodec.class);
    if (codec == null) {
      return LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_SOCKET;
    }
    Http2Connection http2 = codec.connection();
    Http2RemoteFlowController flow = http2.remote().flowController();
    Http2Stream stream = http2.stream(((Http2StreamChannel) channel).stream().id());
    return cause(flow, stream, http2.connectionStream());
  }

  /** The cause given the stream (null once closed) and the connection's flow-control windows. */
  static String cause(Http2RemoteFlowController flow, Http2Stream stream, Http2Stream connection) {
    if (stream != null && flow.windowSize(stream) <= 0) {
      return LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_HTTP2_STREAM_WINDOW;
    }
    if (flow.windowSize(connection) <= 0) {
      return LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_HTTP2_CONNECTION_WINDOW;
    }
    return LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_SOCKET;
  }
}

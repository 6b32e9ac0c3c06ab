package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http2.DefaultHttp2Connection;
import io.netty.handler.codec.http2.DefaultHttp2RemoteFlowController;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Stream;
import org.junit.jupiter.api.Test;

/**
 * {@link NettyHttp2Windows} on a server's HTTP/2 connection state (Netty's own, no channel): a
 * client's stream and the connection, their windows as the client's {@code WINDOW_UPDATE}s and the
 * server's DATA leave them.
 */
class NettyHttp2WindowsTest {
  private static final int DEFAULT_WINDOW = 65_535;

  private final Http2Connection connection = new DefaultHttp2Connection(true);
  private final DefaultHttp2RemoteFlowController flow =
      new DefaultHttp2RemoteFlowController(connection);
  private final Http2Stream stream;

  NettyHttp2WindowsTest() throws Http2Exception {
    connection.remote().flowController(flow);
    stream = connection.remote().createStream(3, false); // the client's request
  }

  @Test
  void windowsLeftMeanTheSocketHeldTheBytes() {
    assertThat(cause()).isEqualTo("socket");
    spend(stream, DEFAULT_WINDOW - 1); // one byte left
    assertThat(cause()).isEqualTo("socket");
  }

  @Test
  void theStreamsSpentWindowIsTheCause() {
    spend(stream, DEFAULT_WINDOW);
    assertThat(cause()).isEqualTo("http2_stream_window");
    spend(connection.connectionStream(), DEFAULT_WINDOW);
    assertThat(cause()).as("both spent: the stream's first").isEqualTo("http2_stream_window");
  }

  @Test
  void theConnectionsSpentWindowIsTheCauseWhileTheStreamHasSomeLeft() {
    spend(connection.connectionStream(), DEFAULT_WINDOW);
    assertThat(cause()).isEqualTo("http2_connection_window");
    assertThat(NettyHttp2Windows.cause(flow, null, connection.connectionStream()))
        .as("a stream already closed")
        .isEqualTo("http2_connection_window");
  }

  private String cause() {
    return NettyHttp2Windows.cause(flow, stream, connection.connectionStream());
  }

  /** The window as after the server sent {@code bytes} of DATA the client has not granted back. */
  private void spend(Http2Stream of, int bytes) {
    try {
      flow.incrementWindowSize(of, -bytes);
    } catch (Http2Exception e) {
      throw new AssertionError(e);
    }
    assertThat(flow.windowSize(of)).isEqualTo(DEFAULT_WINDOW - bytes);
  }
}

package dev.llmlat.agent.gatewayapp;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.Version;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The gateway on a plain Netty HTTP server (the API is the same on Netty 4.1 and 4.2; the test runs
 * it on 4.2): requests are aggregated, relayed with the JDK HttpClient from a worker thread, and
 * the engine's SSE stream written back chunk by chunk from that thread. Args: upstream base URL.
 * Prints {@code LISTENING <port>}.
 */
public final class NettyGatewayMain {
  private NettyGatewayMain() {}

  @SuppressWarnings("deprecation") // NioEventLoopGroup: the one constructor both 4.1 and 4.2 have
  public static void main(String[] args) throws Exception {
    Upstream upstream = new Upstream(args[0]);
    ExecutorService relays = Executors.newCachedThreadPool();
    Channel server =
        new ServerBootstrap()
            .group(new NioEventLoopGroup(1), new NioEventLoopGroup(2))
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    channel
                        .pipeline()
                        .addLast(
                            new HttpServerCodec(),
                            new HttpObjectAggregator(1 << 20),
                            new RelayHandler(upstream, relays));
                  }
                })
            .bind("127.0.0.1", 0)
            .sync()
            .channel();
    System.out.println("NETTY " + Version.identify().get("netty-codec-http").artifactVersion());
    System.out.println("LISTENING " + ((InetSocketAddress) server.localAddress()).getPort());
    server.closeFuture().sync();
  }

  private static final class RelayHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final Upstream upstream;
    private final ExecutorService relays;

    RelayHandler(Upstream upstream, ExecutorService relays) {
      this.upstream = upstream;
      this.relays = relays;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      byte[] body = ByteBufUtil.getBytes(request.content());
      String path = request.uri();
      relays.execute(() -> relay(ctx, path, body));
    }

    private void relay(ChannelHandlerContext ctx, String path, byte[] body) {
      try {
        java.net.http.HttpResponse<InputStream> response = upstream.forward(path, body);
        String contentType = Upstream.contentType(response);
        HttpResponseStatus status = HttpResponseStatus.valueOf(response.statusCode());
        try (InputStream in = response.body()) {
          if (!Upstream.isEventStream(contentType)) {
            FullHttpResponse full =
                new DefaultFullHttpResponse(
                    HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(in.readAllBytes()));
            full.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
            HttpUtil.setContentLength(full, full.content().readableBytes());
            ctx.writeAndFlush(full);
            return;
          }
          HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, status);
          head.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
          HttpUtil.setTransferEncodingChunked(head, true);
          ctx.write(head);
          byte[] buffer = new byte[8192];
          for (int n; (n = in.read(buffer)) >= 0; ) {
            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(buffer, 0, n)));
          }
          ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        }
      } catch (Exception e) {
        e.printStackTrace();
        ctx.close();
      }
    }
  }
}

package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SseEventCounterTest {

  private static int countInPieces(String stream, int piece) {
    SseEventCounter counter = new SseEventCounter();
    byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
    int events = 0;
    for (int i = 0; i < bytes.length; i += piece) {
      events += counter.accept(bytes, i, Math.min(piece, bytes.length - i));
    }
    return events;
  }

  @Test
  void countsContentEventsButNotDoneCommentsOrMetadata() {
    String stream =
        ": keep-alive\n\n"
            + "event: message\nid: 1\ndata: {\"choices\":[{\"delta\":{\"content\":\"He\"}}]}\n\n"
            + "data: {\"a\":1}\r\ndata: {\"continued\":true}\r\n\r\n"
            + "data:{\"b\":2}\n\n"
            + "data: [DONE]\n\n";
    for (int piece : new int[] {1, 3, 1000}) {
      assertThat(countInPieces(stream, piece)).as("split every %d bytes", piece).isEqualTo(3);
    }
  }

  @Test
  void aDataLineThatOnlyStartsLikeDoneIsContent() {
    assertThat(countInPieces("data: [DONE]x\n\ndata: [DON\n\ndatum: 1\n\n", 2)).isEqualTo(2);
  }

  @Test
  void buffersCountAsArraysDoWhereverTheWritesSplit() {
    byte[] bytes =
        (": keep-alive\n\nevent: message\ndata: {\"choices\":[{\"delta\":{\"content\":\"He\"}}]}\n\n"
                + "data: {\"a\":1}\r\ndata: {\"continued\":true}\r\n\r\ndata: [DONE]x\n\ndata: [DONE]\n\n")
            .getBytes(StandardCharsets.UTF_8);
    for (int piece = 1; piece <= bytes.length; piece++) {
      SseEventCounter arrays = new SseEventCounter();
      SseEventCounter buffers = new SseEventCounter();
      int fromArrays = 0;
      int fromBuffers = 0;
      for (int i = 0; i < bytes.length; i += piece) {
        int length = Math.min(piece, bytes.length - i);
        fromArrays += arrays.accept(bytes, i, length);
        ByteBuffer direct = ByteBuffer.allocateDirect(length + 2); // content between other bytes
        direct.put((byte) 'x').put(bytes, i, length).put((byte) '\n');
        fromBuffers += buffers.accept(direct.position(1).limit(1 + length));
      }
      assertThat(fromArrays).as("split every %d bytes", piece).isEqualTo(3);
      assertThat(fromBuffers).as("split every %d bytes", piece).isEqualTo(3);
    }
  }
}

package dev.llmlat.analyze.enginetraces;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

/**
 * A deterministic run of one engine behind one gateway, in true time: Poisson arrivals, a gateway
 * relaying each request over a loopback network, an engine that tokenizes, queues requests
 * first-come first-served, runs each prompt in chunks of 512 tokens, samples the first token and
 * decodes the rest. Every figure a test checks comes from here, not from the analyzer.
 */
public final class EngineScenario {
  static final long US = 1_000L;
  static final long MS = 1_000_000L;

  /**
   * One request end to end: the engine's truth and the gateway's side (its SERVER span from {@code
   * gatewayStartNs} to {@code gatewayEndNs}, its upstream CLIENT span from {@code clientStartNs} to
   * the response headers at {@code clientEndNs}, the first content chunk written to the caller at
   * {@code firstChunkNs}).
   */
  public record Request(
      RequestTruth truth,
      String serverSpanId,
      String clientSpanId,
      long gatewayStartNs,
      long clientStartNs,
      long clientEndNs,
      long firstChunkNs,
      long gatewayEndNs,
      int replica) {

    /** TTFT as the gateway's caller sees it. */
    public long ttftNs() {
      return firstChunkNs - gatewayStartNs;
    }
  }

  private EngineScenario() {}

  /**
   * {@code n} requests from {@code baseNs}, spread over {@code replicas} engine replicas in turn;
   * every third request moves its KV cache first ({@code kvTransfer}, disaggregated serving).
   */
  public static List<Request> generate(
      long seed, int n, long baseNs, int replicas, boolean kvTransfer) {
    Random random = new Random(seed);
    HexFormat hex = HexFormat.of();
    long[] busyUntil = new long[replicas];
    List<Request> out = new ArrayList<>();
    long t = baseNs;
    for (int i = 0; i < n; i++) {
      t += Math.round(-Math.log(1 - random.nextDouble()) * 40 * MS);
      int replica = i % replicas;
      byte[] id = new byte[16];
      random.nextBytes(id);
      String traceId = hex.formatHex(id);
      String server = hex.formatHex(id, 0, 8).replaceFirst("^.", "1");
      String client = hex.formatHex(id, 8, 16).replaceFirst("^.", "2");
      int prompt = 64 + random.nextInt(3000);
      int output = 8 + random.nextInt(24);
      long gatewayStart = t;
      long clientStart = gatewayStart + 300 * US + random.nextInt(200) * US;
      long received = clientStart + 250 * US;
      long arrival = received + 500 * US + prompt * 2 * US; // templating and tokenization
      long kv = kvTransfer && i % 3 == 0 ? 3 * MS + random.nextInt(2000) * US : 0;
      long scheduled = Math.max(arrival + 200 * US + kv, busyUntil[replica]);
      List<RequestTruth.Chunk> chunks = new ArrayList<>();
      long c = scheduled;
      for (int left = prompt; left > 0; left -= 512) {
        int tokens = Math.min(512, left);
        long end = c + 2 * MS + tokens * 20 * US;
        chunks.add(new RequestTruth.Chunk(c, end, tokens));
        c = end;
      }
      busyUntil[replica] = c;
      long firstToken = c + 400 * US;
      long[] tokens = new long[output];
      tokens[0] = firstToken;
      for (int k = 1; k < output; k++) {
        tokens[k] = tokens[k - 1] + 8 * MS + random.nextInt(3000) * US;
      }
      long finish = tokens[output - 1] + 300 * US;
      long headers =
          received + 1200 * US + 250 * US; // streamed: headers go out before the first token
      long firstChunk = firstToken + 300 * US + 250 * US + 100 * US;
      long gatewayEnd = finish + 250 * US + 400 * US;
      RequestTruth truth =
          new RequestTruth(
              traceId,
              client,
              "chatcmpl-" + traceId.substring(0, 12),
              "meta-llama/Llama-3.1-8B-Instruct",
              prompt,
              output,
              received,
              arrival,
              scheduled,
              chunks,
              firstToken,
              tokens,
              finish,
              output % 5 == 0 ? "length" : "stop",
              kv);
      out.add(
          new Request(
              truth,
              server,
              client,
              gatewayStart,
              clientStart,
              headers,
              firstChunk,
              gatewayEnd,
              replica));
    }
    return out;
  }

  /**
   * The same truth on a clock that reads {@code skewNs} more than true time (the engine's, when
   * skewed).
   */
  public static RequestTruth onClock(RequestTruth r, long skewNs) {
    List<RequestTruth.Chunk> chunks =
        r.prefillChunks().stream()
            .map(c -> new RequestTruth.Chunk(c.startNs() + skewNs, c.endNs() + skewNs, c.tokens()))
            .toList();
    long[] tokens = r.tokenNs().clone();
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] += skewNs;
    }
    return new RequestTruth(
        r.traceId(),
        r.parentSpanId(),
        r.requestId(),
        r.model(),
        r.promptTokens(),
        r.outputTokens(),
        r.receivedNs() + skewNs,
        r.arrivalNs() + skewNs,
        r.scheduledNs() + skewNs,
        chunks,
        r.firstTokenNs() + skewNs,
        tokens,
        r.finishNs() + skewNs,
        r.finishReason(),
        r.kvTransferNs());
  }
}

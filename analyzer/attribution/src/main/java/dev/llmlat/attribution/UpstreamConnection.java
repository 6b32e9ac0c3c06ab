package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How the gateway got the connection of one upstream call, as the extension's connection hooks saw
 * it: the wait for a pooled connection, TCP connect, the TLS handshake, and when the request went
 * on the wire (its headers written). Read from the call's CLIENT span, and from the gateway's
 * SERVER span where a client stack gets its connection before its CLIENT span starts (Reactor
 * Netty): there the events naming this call, else the last unnamed acquisition that began before
 * the call's span. Times are -1 where not seen.
 *
 * @param client the client stack whose hooks saw the call, "" when none did (set-up unknown)
 * @param pool the pool's key for the destination, "" when unknown
 * @param poolMax the pool's most connections to it, -1 when unknown
 * @param pending requests already waiting for a connection of that pool when this one asked, -1
 *     when unknown
 * @param leased the pool's connections in use when this one asked, -1 when unknown
 * @param reused true for a pooled connection, false for a new one, null when unknown
 */
public record UpstreamConnection(
    String client,
    long acquireStartNs,
    long acquiredNs,
    long connectStartNs,
    long connectedNs,
    long tlsStartNs,
    long tlsDoneNs,
    long wireStartNs,
    String pool,
    long poolMax,
    long pending,
    long leased,
    Boolean reused) {

  /** What a call without connection hooks shows: nothing. */
  public static final UpstreamConnection UNKNOWN =
      new UpstreamConnection("", -1, -1, -1, -1, -1, -1, -1, "", -1, -1, -1, null);

  /** True when a client stack's hooks saw this call. */
  public boolean observed() {
    return !client.isEmpty();
  }

  public long poolWaitNs() {
    return span(acquireStartNs, acquiredNs);
  }

  public long connectNs() {
    return span(connectStartNs, connectedNs);
  }

  public long tlsNs() {
    return span(tlsStartNs, tlsDoneNs);
  }

  /** "new", "reused", or "" when unknown. */
  public String connection() {
    return reused == null ? "" : reused ? "reused" : "new";
  }

  /** The pool as people read it: {@code pool http://engine:8000 (max 1; 2 waiting, 1 in use)}. */
  public String poolLabel() {
    StringBuilder out = new StringBuilder("pool");
    if (!pool.isEmpty()) {
      out.append(' ').append(pool);
    }
    List<String> figures = new ArrayList<>();
    if (poolMax >= 0) {
      figures.add("max " + poolMax);
    }
    if (pending >= 0) {
      figures.add(pending + " waiting");
    }
    if (leased >= 0) {
      figures.add(leased + " in use");
    }
    return figures.isEmpty()
        ? out.toString()
        : out.append(" (").append(String.join(", ", figures)).append(')').toString();
  }

  /**
   * The connection of the call {@code call} (the gateway's CLIENT span the engine's request came
   * from) made while serving {@code server}; {@link #UNKNOWN} when neither span has acquire events
   * or a client stack.
   */
  public static UpstreamConnection of(SpanRecord server, SpanRecord call) {
    Reading r = new Reading();
    r.read(call.events(), Long.MAX_VALUE);
    String client = call.attr(LlmlatAttributes.UPSTREAM_CLIENT);
    if (server != null && r.acquireStart < 0) {
      List<SpanRecord.Event> mine = new ArrayList<>();
      for (SpanRecord.Event ev : server.events()) {
        String id = ev.attributes().getOrDefault(LlmlatAttributes.UPSTREAM_SPAN_ID, "");
        if (id.equals(call.spanId()) || id.isEmpty() && ev.name().startsWith(EVENT_PREFIX)) {
          mine.add(ev);
        }
      }
      r.readLastBefore(mine, call.startNs());
      if (client.isEmpty()) {
        client = server.attr(LlmlatAttributes.UPSTREAM_CLIENT);
      }
    }
    if (client.isEmpty() && r.acquireStart < 0 && r.connectStart < 0 && r.headers < 0) {
      return UNKNOWN;
    }
    long wire = r.headers >= 0 ? r.headers : r.body;
    return new UpstreamConnection(
        client,
        r.acquireStart,
        r.acquired,
        r.connectStart,
        r.connected,
        r.tlsStart,
        r.tlsDone,
        wire,
        r.pool,
        r.poolMax,
        r.pending,
        r.leased,
        r.reused);
  }

  private static final String EVENT_PREFIX = "llmlat.upstream.";

  private static long span(long from, long to) {
    return from >= 0 && to >= from ? to - from : 0;
  }

  /** The events of one acquisition, first of each kind. */
  private static final class Reading {
    long acquireStart = -1;
    long acquired = -1;
    long connectStart = -1;
    long connected = -1;
    long tlsStart = -1;
    long tlsDone = -1;
    long headers = -1;
    long body = -1;
    String pool = "";
    long poolMax = -1;
    long pending = -1;
    long leased = -1;
    Boolean reused;

    void read(List<SpanRecord.Event> events, long before) {
      for (SpanRecord.Event ev : events) {
        if (ev.timeNs() > before) {
          continue;
        }
        Map<String, String> a = ev.attributes();
        switch (ev.name()) {
          case LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START -> {
            if (acquireStart < 0) {
              acquireStart = ev.timeNs();
              pool = a.getOrDefault(LlmlatAttributes.UPSTREAM_POOL, "");
              poolMax = number(a, LlmlatAttributes.UPSTREAM_POOL_MAX);
              pending = number(a, LlmlatAttributes.UPSTREAM_POOL_PENDING);
              leased = number(a, LlmlatAttributes.UPSTREAM_POOL_LEASED);
            }
          }
          case LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED -> {
            if (acquired < 0) {
              acquired = ev.timeNs();
              String value = a.get(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED);
              reused = value == null || value.isEmpty() ? null : Boolean.parseBoolean(value);
              if (pool.isEmpty()) {
                pool = a.getOrDefault(LlmlatAttributes.UPSTREAM_POOL, "");
              }
              poolMax = poolMax >= 0 ? poolMax : number(a, LlmlatAttributes.UPSTREAM_POOL_MAX);
            }
          }
          case LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START ->
              connectStart = connectStart < 0 ? ev.timeNs() : connectStart;
          case LlmlatAttributes.EVENT_UPSTREAM_CONNECTED ->
              connected = connected < 0 ? ev.timeNs() : connected;
          case LlmlatAttributes.EVENT_UPSTREAM_TLS_START ->
              tlsStart = tlsStart < 0 ? ev.timeNs() : tlsStart;
          case LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE ->
              tlsDone = tlsDone < 0 ? ev.timeNs() : tlsDone;
          case LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN ->
              headers = headers < 0 ? ev.timeNs() : headers;
          case LlmlatAttributes.EVENT_UPSTREAM_BODY_WRITTEN -> body = body < 0 ? ev.timeNs() : body;
          default -> {}
        }
      }
    }

    /**
     * The events from the last acquisition that began by {@code before} on (a SERVER span can hold
     * several calls').
     */
    void readLastBefore(List<SpanRecord.Event> events, long before) {
      long last = -1;
      for (SpanRecord.Event ev : events) {
        if (LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START.equals(ev.name())
            && ev.timeNs() <= before) {
          last = Math.max(last, ev.timeNs());
        }
      }
      List<SpanRecord.Event> from = new ArrayList<>();
      for (SpanRecord.Event ev : events) {
        if (ev.timeNs() >= last) {
          from.add(ev);
        }
      }
      read(from, Long.MAX_VALUE);
    }

    private static long number(Map<String, String> a, String key) {
      String v = a.get(key);
      if (v == null || v.isEmpty()) {
        return -1;
      }
      try {
        return Long.parseLong(v);
      } catch (NumberFormatException e) {
        return -1;
      }
    }
  }
}

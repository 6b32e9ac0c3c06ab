package dev.llmlat.attribution;

import dev.llmlat.attribution.engines.EngineRequest;
import dev.llmlat.attribution.engines.UnknownEngine;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.TtftComponent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Splits a request's TTFT into contiguous components that sum exactly to it. The timeline from the
 * client's request (a client layer that sent trace context), else the gateway's server span start,
 * else the engine's arrival, to the first content chunk the client received (else written by the
 * gateway, else the first token) is cut at every span boundary; each piece goes to the
 * highest-priority explanation covering it (engine step > queue > first sample > prefill gaps >
 * gateway/network), and pieces nothing explains are {@code unattributed}. Step pieces are then
 * split by the step's GPU busy time into prefill CPU/launch, the request's own GPU share (by
 * tokens) and batch interference (the other requests' tokens). A step several ranks ran (tensor
 * parallelism, {@link RankWaits}) is one step over its ranks' copies; its wait for a late rank is
 * {@code rank_wait}, out of the GPU share first (the wait is spent spinning in collective kernels),
 * then of the CPU share.
 */
final class TtftAttributor {
  private record Labeled(
      String label, String span, long start, long end, int priority, String instance) {
    Labeled(TtftComponent c, String span, long start, long end, String instance) {
      this(c.id(), span, start, end, c.precedence(), instance);
    }

    Labeled(TtftComponent c, String span, long start, long end) {
      this(c, span, start, end, "");
    }
  }

  /**
   * What a step contributes: its interval, GPU busy time, the request's share of its tokens, and
   * for a step several ranks ran (tensor parallelism) its wait for a late rank (null for one rank).
   */
  private record Step(
      String id,
      String span,
      long start,
      long end,
      long busyNs,
      double ownShare,
      boolean gpuMeasured,
      RankWaits.StepWait ranks,
      List<String> served) {
    long rankWaitNs() {
      return ranks == null ? 0 : ranks.waitNs();
    }
  }

  /** The role of a KV transfer between the instances of a disaggregated request. */
  private static final String TRANSFER = "transfer";

  private TtftAttributor() {}

  static Attribution attribute(
      RequestView v, RequestView.Index index, List<ClockCorrection> corrections) {
    EngineRequest r = v.request();
    SpanRecord e = r.span();
    boolean unknownEngine = UnknownEngine.NAME.equals(r.adapter());
    List<String> notes = new ArrayList<>();
    notes.add(
        "engine layer read as "
            + r.adapter()
            + (r.adapter().equals(e.service()) ? "" : " (service " + e.service() + ")"));
    notes.addAll(r.notes());
    long firstToken = firstToken(v, index, notes);
    boolean gateway = v.gatewayServer() != null;
    RequestView.DisaggregatedView pd = v.disaggregated();
    EngineRequest prefill = pd == null ? null : pd.prefill();
    if (pd != null) {
      notes.addAll(disaggregationNotes(pd, gateway));
    }
    // a disaggregated request arrived at its prefill instance
    long arrival = prefill != null ? Math.min(prefill.arrivalNs(), r.arrivalNs()) : r.arrivalNs();
    long t0 = gateway ? Math.min(v.gatewayServer().startNs(), arrival) : arrival;
    long tEnd = firstToken;
    if (gateway) {
      long chunk = gatewayFirstChunk(v.gatewayServer());
      if (chunk > 0) {
        tEnd = chunk;
      } else {
        String server = v.gatewayServer().attr(LlmlatAttributes.GATEWAY_SERVER);
        notes.add(
            server.isEmpty()
                ? "the gateway recorded no first-chunk time: TTFT ends at the engine's first token"
                : "gateway first chunk unknown (server "
                    + server
                    + "): TTFT ends at the engine's first token");
      }
    }
    if (tEnd < 0) {
      notes.add(
          "no layer recorded a first token or first chunk: TTFT is shown up to the engine's end");
      tEnd = r.endNs();
    }
    if (firstToken < 0) {
      firstToken = tEnd;
    }
    if (tEnd < t0) {
      notes.add("first token precedes the request start after clock alignment; TTFT taken as 0");
      tEnd = t0;
    }
    // The server's own TTFT; with a client layer (a load generator sending trace context) TTFT is
    // the client's, from its request to its first content chunk, and the way there and back are
    // components of their own.
    long serverT0 = t0;
    long serverTEnd = tEnd;
    String startLayer = gateway ? LayerNames.GATEWAY : LayerNames.ENGINE;
    SpanRecord client = v.client();
    long clientFirstChunk = client == null ? -1 : clientFirstChunk(client);
    if (client != null && clientFirstChunk < 0) {
      notes.add(
          "the client ("
              + client.service()
              + ") recorded no first content chunk: TTFT is the server's");
    } else if (client != null && (client.startNs() > serverT0 || clientFirstChunk < serverTEnd)) {
      notes.add(
          "the client's request does not cover the server's after clock alignment: TTFT is the server's");
      client = null;
    }
    if (client != null && clientFirstChunk >= 0) {
      t0 = client.startNs();
      tEnd = clientFirstChunk;
      startLayer = LayerNames.CLIENT;
    } else {
      client = null;
    }
    // read once: the gaps, their notes and gateway_out all use the gateway's blocks
    GatewayBackpressure backpressure = GatewayBackpressure.of(v.gatewayServer());
    List<Attribution.Gap> itl = ItlAnalyzer.gaps(v, index, firstToken, backpressure);
    if (gateway && !itl.isEmpty()) {
      notes.addAll(backpressure.notes());
    }
    List<Labeled> labels = new ArrayList<>();
    SpanRecord inbound =
        prefill != null && pd.prefillClient() != null ? pd.prefillClient() : v.gatewayClient();
    UpstreamConnection upstream = UpstreamConnection.UNKNOWN;
    if (gateway && inbound != null) {
      upstream = UpstreamConnection.of(v.gatewayServer(), inbound);
      // the wire starts when the request's headers were written, where the hooks saw it
      long wire =
          upstream.wireStartNs() >= serverT0 && upstream.wireStartNs() <= arrival
              ? upstream.wireStartNs()
              : inbound.startNs();
      labels.add(new Labeled(TtftComponent.GATEWAY_IN, v.gatewayServer().name(), serverT0, wire));
      labels.add(new Labeled(TtftComponent.NETWORK_IN, inbound.name(), wire, arrival));
      // ties go to the label added first: a handshake inside an acquisition is TLS, not pool wait
      String to = upstream.pool().isEmpty() ? "the engine" : upstream.pool();
      labels.add(
          new Labeled(
              TtftComponent.UPSTREAM_TLS,
              "TLS handshake with " + to,
              upstream.tlsStartNs(),
              upstream.tlsDoneNs()));
      labels.add(
          new Labeled(
              TtftComponent.UPSTREAM_CONNECT,
              "TCP connect to " + to,
              upstream.connectStartNs(),
              upstream.connectedNs()));
      labels.add(
          new Labeled(
              TtftComponent.UPSTREAM_POOL_WAIT,
              upstream.poolLabel(),
              upstream.acquireStartNs(),
              upstream.acquiredNs()));
      notes.addAll(connectionNotes(upstream));
    }
    if (unknownEngine) {
      // the engine's time is known only as a whole: named in the path, counted as unattributed
      labels.add(
          new Labeled(
              TtftComponent.UNATTRIBUTED,
              e.service() + ": " + e.name(),
              r.arrivalNs(),
              Math.min(r.endNs(), firstToken)));
    }
    long firstScheduled = unknownEngine ? firstToken : firstScheduled(r, v, index, firstToken);
    List<Step> steps = new ArrayList<>();
    Map<String, String> stepInstance = new java.util.HashMap<>();
    Map<String, String> roles = new LinkedHashMap<>();
    String di = prefill != null ? r.instance() : "";
    long decodeFrom = r.queuedNs();
    long kvReady =
        Long.MIN_VALUE; // a decode instance's own handling counts once the KV was ready, not while
    // the prefill ran
    if (prefill != null && !unknownEngine) {
      // the prefill instance: its handling, queue and prefill, then the KV's way to the decode
      // instance
      String pi = prefill.instance();
      roles.put(pi, Disaggregation.PREFILL);
      roles.put(di, Disaggregation.DECODE);
      long prefillDone = prefillDone(prefill, v.traceId(), index);
      long pScheduled = firstScheduled(prefill, v, index, prefillDone);
      for (EngineRequest.Interval h : prefill.handling()) {
        labels.add(
            new Labeled(
                TtftComponent.ENGINE_IN,
                h.source(),
                h.startNs(),
                Math.min(h.endNs(), prefillDone),
                pi));
      }
      labels.add(new Labeled(TtftComponent.QUEUE, "queue", prefill.queuedNs(), pScheduled, pi));
      for (EngineRequest.Interval q : prefill.waits()) {
        labels.add(
            new Labeled(
                TtftComponent.QUEUE,
                q.source(),
                q.startNs(),
                Math.min(q.endNs(), prefillDone),
                pi));
      }
      long pLast = pScheduled;
      for (Step s : steps(prefill, v, index, pScheduled, prefillDone, notes)) {
        steps.add(s);
        stepInstance.put(s.id(), pi);
        labels.add(
            new Labeled(
                "step:" + s.id(),
                s.span(),
                s.start(),
                Math.min(s.end(), prefillDone),
                TtftComponent.STEP_PRECEDENCE,
                pi));
        pLast = Math.max(pLast, Math.min(s.end(), prefillDone));
      }
      labels.add(new Labeled(TtftComponent.PREFILL_CPU, "prefill", pScheduled, pLast, pi));
      KvHandoff kv = KvHandoff.of(pd.pair(), pLast, prefill, r, notes);
      kvReady = kv.readyNs();
      labels.add(
          new Labeled(
              TtftComponent.FIRST_SAMPLE,
              prefill.span().name() + " until the KV send",
              pLast,
              kv.readyNs(),
              pi));
      long handedOver = Math.max(kv.readyNs(), Math.min(r.arrivalNs(), kv.wireStartNs()));
      labels.add(
          new Labeled(
              TtftComponent.DECODE_WAIT,
              "handoff to the decode instance",
              kv.readyNs(),
              handedOver,
              di));
      labels.add(
          new Labeled(
              TtftComponent.DECODE_WAIT,
              pd.pair().kvRecv() != null
                  ? "decode instance not receiving (kv_recv not started)"
                  : "decode instance not receiving",
              handedOver,
              kv.wireStartNs(),
              di));
      String wire = pi + " -> " + di;
      roles.put(wire, TRANSFER);
      labels.add(
          new Labeled(
              TtftComponent.KV_TRANSFER, kv.wireSource(), kv.wireStartNs(), kv.wireEndNs(), wire));
      decodeFrom = Math.min(kv.wireEndNs(), firstScheduled);
    }
    if (!unknownEngine) {
      labels.add(
          new Labeled(
              TtftComponent.QUEUE,
              "queue",
              prefill != null ? decodeFrom : r.queuedNs(),
              firstScheduled,
              di));
    }
    for (EngineRequest.Interval h : r.handling()) {
      labels.add(
          new Labeled(
              TtftComponent.ENGINE_IN,
              h.source(),
              Math.max(h.startNs(), kvReady),
              Math.min(h.endNs(), firstToken),
              di));
    }
    for (EngineRequest.Interval q : r.waits()) {
      // a decode instance's wait before the KV came is decode_wait, not its queue
      long from = prefill != null ? Math.max(q.startNs(), decodeFrom) : q.startNs();
      labels.add(
          new Labeled(TtftComponent.QUEUE, q.source(), from, Math.min(q.endNs(), firstToken), di));
    }
    if (prefill == null) {
      for (EngineRequest.Interval k : r.kvTransfers()) {
        labels.add(
            new Labeled(
                TtftComponent.KV_TRANSFER,
                k.source(),
                k.startNs(),
                Math.min(k.endNs(), firstToken)));
      }
    }
    long lastStepEnd = firstScheduled;
    for (Step s :
        unknownEngine ? List.<Step>of() : steps(r, v, index, firstScheduled, firstToken, notes)) {
      steps.add(s);
      stepInstance.put(s.id(), di);
      labels.add(
          new Labeled(
              "step:" + s.id(),
              s.span(),
              s.start(),
              Math.min(s.end(), firstToken),
              TtftComponent.STEP_PRECEDENCE,
              di));
      lastStepEnd = Math.max(lastStepEnd, Math.min(s.end(), firstToken));
    }
    if (!unknownEngine) {
      labels.add(
          new Labeled(TtftComponent.PREFILL_CPU, "prefill", firstScheduled, lastStepEnd, di));
      labels.add(new Labeled(TtftComponent.FIRST_SAMPLE, e.name(), lastStepEnd, firstToken, di));
    }
    if (gateway) {
      long upstreamChunk =
          v.gatewayClient() == null ? -1 : upstreamFirstChunk(v.gatewayServer(), v.gatewayClient());
      boolean split = upstreamChunk >= firstToken && upstreamChunk <= serverTEnd;
      if (split) {
        labels.add(
            new Labeled(
                TtftComponent.NETWORK_OUT, v.gatewayClient().name(), firstToken, upstreamChunk));
        labels.add(
            new Labeled(
                TtftComponent.GATEWAY_OUT, v.gatewayServer().name(), upstreamChunk, serverTEnd));
      } else {
        labels.add(
            new Labeled(
                TtftComponent.NETWORK_OUT, v.gatewayServer().name(), firstToken, serverTEnd));
      }
      // the gateway's own record of not being able to write the first token to its client:
      // gateway_out, on its clock, named above the rest of gateway_out and network_out
      long from = split ? upstreamChunk : firstToken;
      for (GatewayBackpressure.Block b : backpressure.blocks()) {
        if (b.endNs() > from && b.startNs() < serverTEnd) {
          labels.add(
              new Labeled(
                  TtftComponent.GATEWAY_OUT.id(),
                  b.cause().text(),
                  Math.max(from, b.startNs()),
                  Math.min(serverTEnd, b.endNs()),
                  TtftComponent.GATEWAY_OUT.precedence() + 1,
                  ""));
        }
      }
    }
    if (client != null) {
      labels.add(new Labeled(TtftComponent.CLIENT_TO_GATEWAY, client.name(), t0, serverT0));
      labels.add(new Labeled(TtftComponent.GATEWAY_TO_CLIENT, client.name(), serverTEnd, tEnd));
    }

    // Sweep the elementary pieces of [t0, tEnd): between the cut points in ascending order, each
    // once (a sorted array: no boxed set per request).
    long[] cuts = new long[2 + 2 * labels.size()];
    int n = 0;
    cuts[n++] = t0;
    cuts[n++] = tEnd;
    for (Labeled l : labels) {
      if (l.end() > l.start()) {
        cuts[n++] = clamp(l.start(), t0, tEnd);
        cuts[n++] = clamp(l.end(), t0, tEnd);
      }
    }
    java.util.Arrays.sort(cuts, 0, n);
    Map<String, Long> raw = new LinkedHashMap<>(); // by label and instance
    List<Attribution.Segment> path = new ArrayList<>();
    boolean started = false;
    long previous = 0;
    for (int i = 0; i < n; i++) {
      long cut = cuts[i];
      if (started && cut > previous) {
        Labeled best = null;
        for (Labeled l : labels) {
          if (l.start() <= previous
              && l.end() >= cut
              && (best == null || l.priority() > best.priority())) {
            best = l;
          }
        }
        String label = best == null ? TtftComponent.UNATTRIBUTED.id() : best.label();
        String instance = best == null ? "" : best.instance();
        raw.merge(label + '\u0000' + instance, cut - previous, Long::sum);
        String span = best == null ? "" : best.span();
        Attribution.Segment last = path.isEmpty() ? null : path.get(path.size() - 1);
        String component = label.startsWith("step:") ? "step" : label;
        if (last != null
            && last.component().equals(component)
            && last.span().equals(span)
            && last.endNs() == previous
            && last.instance().equals(instance)) {
          path.set(
              path.size() - 1,
              new Attribution.Segment(component, span, last.startNs(), cut, instance));
        } else {
          path.add(new Attribution.Segment(component, span, previous, cut, instance));
        }
      }
      previous = cut;
      started = true;
    }

    Map<String, Long> components = new LinkedHashMap<>();
    for (TtftComponent c : TtftComponent.all()) {
      components.put(c.id(), 0L);
    }
    Map<String, Long> perInstance =
        new LinkedHashMap<>(); // component and instance, for disaggregated requests
    Map<String, Attribution.RankWait> lateRanks = new LinkedHashMap<>();
    Map<String, Long> byTenant =
        new LinkedHashMap<>(); // the other tenants' part in this request's waiting
    for (Map.Entry<String, Long> entry : raw.entrySet()) {
      String label = entry.getKey().substring(0, entry.getKey().indexOf('\u0000'));
      String instance = entry.getKey().substring(label.length() + 1);
      if (label.startsWith("step:")) {
        Step s =
            steps.stream().filter(x -> ("step:" + x.id()).equals(label)).findFirst().orElseThrow();
        long covered = entry.getValue();
        long duration = Math.max(1, s.end() - s.start());
        // a GPU step can outlast its CPU step span (kernels run after the launches): busy never
        // exceeds the piece
        long busy = Math.min(covered, Math.round(s.busyNs() * (covered / (double) duration)));
        // a wait for a late rank is spent in collective kernels (GPU time) or, beyond the busy
        // time, launching
        long wait = Math.min(covered, Math.round(s.rankWaitNs() * (covered / (double) duration)));
        long waitGpu = Math.min(wait, busy);
        long cpu = covered - busy - (wait - waitGpu);
        long own = Math.round((busy - waitGpu) * s.ownShare());
        components.merge(TtftComponent.PREFILL_CPU.id(), cpu, Long::sum);
        components.merge(TtftComponent.PREFILL_GPU.id(), own, Long::sum);
        components.merge(TtftComponent.RANK_WAIT.id(), wait, Long::sum);
        components.merge(TtftComponent.BATCH_INTERFERENCE.id(), busy - waitGpu - own, Long::sum);
        perInstance.merge(TtftComponent.PREFILL_CPU.id() + '\u0000' + instance, cpu, Long::sum);
        perInstance.merge(TtftComponent.PREFILL_GPU.id() + '\u0000' + instance, own, Long::sum);
        perInstance.merge(TtftComponent.RANK_WAIT.id() + '\u0000' + instance, wait, Long::sum);
        perInstance.merge(
            TtftComponent.BATCH_INTERFERENCE.id() + '\u0000' + instance,
            busy - waitGpu - own,
            Long::sum);
        shareAmongOthers(busy - waitGpu - own, s.served(), v.traceId(), index, byTenant);
        if (wait > 0) {
          RankWaits.Rank late = s.ranks().late();
          lateRanks.merge(
              late.name(),
              new Attribution.RankWait(late.name(), late.where(), wait, 1),
              (x, y) ->
                  new Attribution.RankWait(
                      x.rank(), x.device(), x.waitNs() + y.waitNs(), x.steps() + y.steps()));
        }
      } else {
        components.merge(label, entry.getValue(), Long::sum);
        perInstance.merge(entry.getKey(), entry.getValue(), Long::sum);
      }
    }
    List<Attribution.InstancePart> parts = new ArrayList<>();
    if (prefill != null) {
      for (TtftComponent component : TtftComponent.all()) {
        String c = component.id();
        for (Map.Entry<String, String> role : roles.entrySet()) {
          long ns = perInstance.getOrDefault(c + '\u0000' + role.getKey(), 0L);
          if (ns != 0) {
            parts.add(new Attribution.InstancePart(c, role.getKey(), role.getValue(), ns));
          }
        }
      }
    }
    String model = r.model();
    if (model.isEmpty() && gateway) {
      model = v.gatewayServer().attr("gen_ai.request.model");
      if (!model.isEmpty()) {
        notes.add("model from the gateway's request (the engine's span names none)");
      }
    }
    QueueBreakdown queue =
        index.queueBreakdown
            ? QueueAnalyzer.breakdown(
                v.traceId(), e.engineInstance(), path, r.preemptionNs(), index.stepIndex)
            : QueueBreakdown.NONE;
    for (QueueBreakdown.Part p : queue.parts()) {
      if (QueueBreakdown.PREFILL.equals(p.kind()) && !p.traceId().isEmpty()) {
        String blocker = index.tenantOf(p.traceId());
        if (!blocker.isEmpty()) {
          byTenant.merge(blocker, p.ns(), Long::sum);
        }
      }
    }
    List<Attribution.TenantShare> tenantCauses =
        byTenant.entrySet().stream()
            .filter(t -> t.getValue() > 0)
            .map(t -> new Attribution.TenantShare(t.getKey(), t.getValue()))
            .toList();
    long promptTokens =
        r.promptTokens() == 0 && prefill != null ? prefill.promptTokens() : r.promptTokens();
    int chunks = r.prefills().size() + (prefill == null ? 0 : prefill.prefills().size());
    return new Attribution(
        v.traceId(),
        r.requestId(),
        model,
        e.service(),
        r.instance(),
        r.adapter(),
        arrival,
        startLayer,
        tEnd - t0,
        serverTEnd - serverT0,
        components,
        path,
        itl,
        corrections,
        promptTokens,
        r.outputTokens(),
        chunks,
        r.preemptionNs().size(),
        notes,
        queue,
        parts,
        List.copyOf(lateRanks.values()),
        upstream,
        index.tenantOf(v.traceId()),
        tenantCauses);
  }

  /**
   * A step's time spent on the other requests of its batch, shared equally among them and booked to
   * their tenants.
   */
  private static void shareAmongOthers(
      long ns,
      List<String> served,
      String self,
      RequestView.Index index,
      Map<String, Long> byTenant) {
    if (ns <= 0 || served.size() < 2) {
      return;
    }
    long others = served.stream().filter(t -> !t.equals(self)).count();
    if (others == 0) {
      return;
    }
    for (String t : served) {
      String tenant = t.equals(self) ? "" : index.tenantOf(t);
      if (!tenant.isEmpty()) {
        byTenant.merge(tenant, ns / others, Long::sum);
      }
    }
  }

  /**
   * That the gateway's connection hooks saw nothing of the upstream call (what they saw is {@link
   * Attribution#upstream}).
   */
  private static List<String> connectionNotes(UpstreamConnection c) {
    return c.observed()
        ? List.of()
        : List.of("connection set-up unknown: the gateway's HTTP client is not instrumented");
  }

  /**
   * The first token: the engine's, else the end of the request's last prefill step on the GPU
   * (steps whose NVTX range names the request), else unknown (-1).
   */
  static long firstToken(RequestView v, RequestView.Index index, List<String> notes) {
    EngineRequest r = v.request();
    if (r.firstTokenNs() >= 0) {
      return r.firstTokenNs();
    }
    long lastPrefillEnd = -1;
    for (SpanRecord g : index.gpuStepsByTrace.getOrDefault(v.traceId(), List.of())) {
      if (g.startNs() < r.arrivalNs() || g.startNs() > r.endNs()) {
        continue;
      }
      String kind = g.attr(LlmlatAttributes.STEP_KIND);
      if ("decode".equals(kind) && lastPrefillEnd >= 0) {
        break; // steps are in start order: the first decode after a prefill ends the prefill
      }
      if ("prefill".equals(kind) || "mixed".equals(kind)) {
        lastPrefillEnd = Math.max(lastPrefillEnd, g.endNs());
      }
    }
    if (lastPrefillEnd >= 0) {
      notes.add(
          "no first-token time in the engine layer: the first token is the end of the request's last prefill step on the GPU");
      return lastPrefillEnd;
    }
    if (!UnknownEngine.NAME.equals(r.adapter())) {
      notes.add("no first-token time in the engine or GPU layer: TTFT ends at the request's end");
      return r.endNs();
    }
    return -1;
  }

  static long firstScheduled(
      EngineRequest r, RequestView v, RequestView.Index index, long firstToken) {
    if (r.scheduledNs() >= 0) {
      return r.scheduledNs();
    }
    if (!r.prefills().isEmpty()) {
      return r.prefills().get(0).startNs();
    }
    // An engine that does not say: it waited until the GPU started the first step that served it.
    for (SpanRecord g : index.gpuStepsByTrace.getOrDefault(v.traceId(), List.of())) {
      if (g.startNs() >= r.queuedNs() && g.startNs() < firstToken) {
        return g.startNs();
      }
    }
    return r.queuedNs();
  }

  static long gatewayFirstChunk(SpanRecord server) {
    SpanRecord.Event ev = server.event(LlmlatAttributes.EVENT_FIRST_CHUNK);
    if (ev != null) {
      return ev.timeNs();
    }
    return server.longAttr(LlmlatAttributes.GATEWAY_FIRST_CHUNK_NS, 0);
  }

  /** When the client layer received the first content chunk, or -1. */
  static long clientFirstChunk(SpanRecord client) {
    SpanRecord.Event ev = client.event(LlmlatAttributes.EVENT_CLIENT_FIRST_CHUNK);
    return ev == null ? -1 : ev.timeNs();
  }

  /**
   * When the gateway's HTTP client received the engine's first chunk, or -1: the SERVER span's
   * event naming this CLIENT span (the engine's parent), else an unnamed one when the request made
   * a single upstream call, else the CLIENT span's own copy.
   */
  static long upstreamFirstChunk(SpanRecord server, SpanRecord client) {
    SpanRecord.Event unnamed = null;
    int events = 0;
    for (SpanRecord.Event ev : server.events()) {
      if (LlmlatAttributes.EVENT_UPSTREAM_FIRST_CHUNK.equals(ev.name())) {
        events++;
        String id = ev.attributes().getOrDefault(LlmlatAttributes.UPSTREAM_SPAN_ID, "");
        if (id.equals(client.spanId())) {
          return ev.timeNs();
        }
        unnamed = id.isEmpty() ? ev : unnamed;
      }
    }
    if (unnamed != null && events == 1) {
      return unnamed.timeNs();
    }
    SpanRecord.Event own = client.event(LlmlatAttributes.EVENT_UPSTREAM_FIRST_CHUNK);
    return own == null ? -1 : own.timeNs();
  }

  /**
   * The passes that did this request's prefill, with their GPU busy time and the request's token
   * share.
   */
  private static List<Step> steps(
      EngineRequest r,
      RequestView v,
      RequestView.Index index,
      long from,
      long firstToken,
      List<String> notes) {
    List<Step> steps = new ArrayList<>();
    boolean anyGpu = false;
    boolean stepIds = r.prefills().stream().anyMatch(p -> !p.stepSpanId().isEmpty());
    if (stepIds || index.gpuStepsByTrace.getOrDefault(v.traceId(), List.of()).isEmpty()) {
      for (EngineRequest.Prefill p : r.prefills()) {
        String stepId = p.stepSpanId();
        SpanRecord step = v.engineSteps().get(stepId);
        SpanRecord gpu = v.gpuSteps().get(stepId);
        long start = step != null ? step.startNs() : p.startNs();
        long end = step != null ? step.endNs() : p.endNs();
        long total =
            step != null
                ? step.longAttr(LlmlatAttributes.STEP_PREFILL_TOKENS, 0)
                    + step.longAttr(LlmlatAttributes.STEP_DECODE_TOKENS, 0)
                : p.batchTokens();
        int batch =
            step != null ? (int) step.longAttr(LlmlatAttributes.STEP_BATCH_SIZE, 1) : p.batchSize();
        double share =
            total > 0 && p.tokens() > 0
                ? Math.min(1.0, p.tokens() / (double) total)
                : batch > 0 ? 1.0 / batch : 1.0;
        RankWaits.StepWait ranks = gpu == null ? null : index.rankWaits.get(gpu);
        long busy =
            ranks != null
                ? ranks.busyNs()
                : gpu != null
                    ? gpu.longAttr(LlmlatAttributes.GPU_BUSY_NS, gpu.durationNs())
                    : end - start;
        anyGpu |= gpu != null;
        steps.add(
            new Step(
                stepId.isEmpty() ? p.source() + "@" + p.startNs() : stepId,
                step != null ? step.name() : p.source(),
                start,
                end,
                busy,
                share,
                gpu != null,
                ranks,
                step != null ? index.served(step) : gpu != null ? index.served(gpu) : List.of()));
      }
    } else {
      // GPU steps that name this trace measure the prefill better than an engine's coarse interval
      java.util.Set<RankWaits.StepWait> seen =
          java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
      for (SpanRecord g : index.gpuStepsByTrace.getOrDefault(v.traceId(), List.of())) {
        if (g.startNs() >= from && g.startNs() < firstToken) {
          List<String> served = index.served(g);
          String kind = g.attr(LlmlatAttributes.STEP_KIND);
          double share = "prefill".equals(kind) || served.size() <= 1 ? 1.0 : 1.0 / served.size();
          RankWaits.StepWait ranks = index.rankWaits.get(g);
          if (ranks == null) {
            steps.add(
                new Step(
                    g.spanId(),
                    "gpu step",
                    g.startNs(),
                    g.endNs(),
                    g.longAttr(LlmlatAttributes.GPU_BUSY_NS, g.durationNs()),
                    share,
                    true,
                    null,
                    served));
          } else if (seen.add(ranks)) {
            // every rank's copy is one step (an early rank may have started before the request
            // came): from the
            // earliest rank's start to the latest's end
            steps.add(
                new Step(
                    g.spanId(),
                    "gpu step (" + ranks.ranks().size() + " ranks)",
                    ranks.startNs(),
                    ranks.endNs(),
                    ranks.busyNs(),
                    share,
                    true,
                    ranks,
                    served));
          }
          anyGpu = true;
        }
      }
    }
    if (!steps.isEmpty() && !anyGpu) {
      notes.add("no GPU layer for this request: engine step time is counted as GPU time");
    }
    return steps;
  }

  /**
   * When the prefill instance's prefill was done: its first token, else the end of its last prefill
   * step on the GPU, else of its last prefill pass, else its span's end.
   */
  static long prefillDone(EngineRequest p, String traceId, RequestView.Index index) {
    if (p.firstTokenNs() >= 0) {
      return p.firstTokenNs();
    }
    long done = -1;
    for (SpanRecord g : index.gpuStepsByTrace.getOrDefault(traceId, List.of())) {
      String kind = g.attr(LlmlatAttributes.STEP_KIND);
      if (g.startNs() >= p.arrivalNs()
          && g.startNs() <= p.endNs()
          && ("prefill".equals(kind) || "mixed".equals(kind))) {
        done = Math.max(done, g.endNs());
      }
    }
    if (done < 0 && !p.prefills().isEmpty()) {
      done = p.prefills().get(p.prefills().size() - 1).endNs();
    }
    return done >= 0 ? done : p.endNs();
  }

  /**
   * What the instances of a disaggregated request show, and what cannot be split where one side is
   * missing.
   */
  private static List<String> disaggregationNotes(
      RequestView.DisaggregatedView pd, boolean gateway) {
    Disaggregation d = pd.pair();
    List<String> out = new ArrayList<>();
    if (d.complete()) {
      out.add(
          "disaggregated ("
              + d.evidence()
              + "): prefill on "
              + d.prefill().engineInstance()
              + ", decode on "
              + d.decode().engineInstance());
    } else if (d.decode() != null) {
      out.add(
          "disaggregated ("
              + d.evidence()
              + "): the prefill instance's spans are missing: its queue and prefill, the wait for"
              + " this decode instance and the KV transfer cannot be split"
              + (gateway
                  ? " (they lie in gateway_in)"
                  : " (TTFT starts at the decode instance's arrival)"));
    } else {
      out.add(
          "disaggregated ("
              + d.evidence()
              + "): the decode instance's spans are missing: TTFT ends at the prefill instance's"
              + " first token; the wait for the decode instance, the KV transfer and the first decode step cannot be shown");
    }
    if (d.complete() && d.kvSend() == null && d.kvRecv() != null) {
      out.add(
          "disaggregated: no kv_send span: the wait for the decode instance starts when the prefill was done");
    }
    return out;
  }

  private static long clamp(long v, long lo, long hi) {
    return Math.max(lo, Math.min(hi, v));
  }
}

package dev.llmlat.attribution;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One span as the analyzer sees it: ids, names, layer, host, Unix-ns times, attributes, events,
 * links, the instrumentation scope that wrote it and the process instance it came from.
 *
 * @param host {@code host.name}, else {@code host.id} ("" when the resource names no host)
 * @param scope the instrumentation scope's name ("" when unknown)
 * @param instance the emitting process, by {@link ResourceRule#INSTANCE}: {@code
 *     service.instance.id}, else {@code host.name}, else {@code k8s.pod.name}, else {@code pid N}
 *     ("" when the resource names none of them)
 */
public record SpanRecord(
    String traceId,
    String spanId,
    String parentSpanId,
    String name,
    String kind,
    String service,
    String layer,
    String host,
    String scope,
    String instance,
    long startNs,
    long endNs,
    Map<String, String> attributes,
    List<Event> events,
    List<Link> links) {

  public record Event(long timeNs, String name, Map<String, String> attributes) {}

  public record Link(String traceId, String spanId) {}

  /** A span without scope or instance (tests, Zipkin traces). */
  public SpanRecord(
      String traceId,
      String spanId,
      String parentSpanId,
      String name,
      String kind,
      String service,
      String layer,
      String host,
      long startNs,
      long endNs,
      Map<String, String> attributes,
      List<Event> events,
      List<Link> links) {
    this(
        traceId,
        spanId,
        parentSpanId,
        name,
        kind,
        service,
        layer,
        host,
        "",
        "",
        startNs,
        endNs,
        attributes,
        events,
        links);
  }

  public long durationNs() {
    return endNs - startNs;
  }

  /**
   * The clock that stamped this span: its host (spans of one host share a clock), else its process
   * instance, else its service.
   */
  public String clockDomain() {
    return !host.isEmpty() ? host : !instance.isEmpty() ? instance : service;
  }

  /** The engine instance (replica) that wrote this span: its process instance, else its service. */
  public String engineInstance() {
    return instance.isEmpty() ? service : instance;
  }

  /** The same span attributed to another process instance (a replica told apart by other means). */
  public SpanRecord withInstance(String newInstance) {
    return new SpanRecord(
        traceId,
        spanId,
        parentSpanId,
        name,
        kind,
        service,
        layer,
        host,
        scope,
        newInstance,
        startNs,
        endNs,
        attributes,
        events,
        links);
  }

  public String attr(String key) {
    return attributes.getOrDefault(key, "");
  }

  public long longAttr(String key, long otherwise) {
    return parseLong(attributes.get(key), otherwise);
  }

  /**
   * An attribute's text as a whole number: an integer, or a finite double's whole part (exporters
   * that write every number as a double); {@code otherwise} when empty or not a finite number.
   */
  public static long parseLong(String v, long otherwise) {
    if (v == null || v.isEmpty()) {
      return otherwise;
    }
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      try {
        double d = Double.parseDouble(v);
        return Double.isFinite(d) ? (long) d : otherwise;
      } catch (NumberFormatException e2) {
        return otherwise;
      }
    }
  }

  public double doubleAttr(String key, double otherwise) {
    String v = attributes.get(key);
    try {
      return v == null || v.isEmpty() ? otherwise : Double.parseDouble(v);
    } catch (NumberFormatException e) {
      return otherwise;
    }
  }

  /**
   * A JSON-array attribute (OTLP arrays are stored as JSON text) as strings; none if it is no
   * array.
   */
  public List<String> arrayAttr(String key) {
    String v = attributes.get(key);
    return v == null || v.isEmpty() ? List.of() : ArrayAttributeText.parse(v);
  }

  public Event event(String eventName) {
    for (Event e : events) {
      if (e.name().equals(eventName)) {
        return e;
      }
    }
    return null;
  }

  /** The same span with its times moved by {@code offsetNs} (clock correction). */
  public SpanRecord shifted(long offsetNs) {
    if (offsetNs == 0) {
      return this;
    }
    List<Event> moved = new ArrayList<>(events.size());
    for (Event e : events) {
      moved.add(new Event(e.timeNs() + offsetNs, e.name(), e.attributes()));
    }
    return new SpanRecord(
        traceId,
        spanId,
        parentSpanId,
        name,
        kind,
        service,
        layer,
        host,
        scope,
        instance,
        startNs + offsetNs,
        endNs + offsetNs,
        attributes,
        moved,
        links);
  }
}

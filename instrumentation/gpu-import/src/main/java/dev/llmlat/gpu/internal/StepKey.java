package dev.llmlat.gpu.internal;

/**
 * A step as every rank names it: the range text and how many ranges of that text the rank opened
 * before (decode steps of one batch repeat their text).
 */
public record StepKey(String name, int occurrence) {}

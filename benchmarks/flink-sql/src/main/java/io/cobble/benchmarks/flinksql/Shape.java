package io.cobble.benchmarks.flinksql;

import java.util.ArrayList;
import java.util.List;

/** A job shape, run the same way for every engine. */
enum Shape {
  SINK("sink", 0),
  LOOKUP_HITS("lookup-hits", 9),
  LOOKUP_MISSES("lookup-misses", 1);

  final String label;

  /** Of every ten probes, how many hit a stored key (lookup shapes only). */
  final int hitsPerTen;

  Shape(String label, int hitsPerTen) {
    this.label = label;
    this.hitsPerTen = hitsPerTen;
  }

  boolean isLookup() {
    return this != SINK;
  }

  static List<Shape> parseList(String text) {
    List<Shape> shapes = new ArrayList<>();
    for (String name : text.split(",")) {
      shapes.add(parse(name.trim()));
    }
    return shapes;
  }

  private static Shape parse(String name) {
    for (Shape shape : values()) {
      if (shape.label.equals(name)) {
        return shape;
      }
    }
    throw new IllegalArgumentException(
        "Unknown shape '" + name + "' in --shapes; use sink, lookup-hits and/or lookup-misses.");
  }
}

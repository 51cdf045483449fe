package io.cobble.schema;

/** A column of a family as persisted: a stable id (never reused) plus its spec. */
public final class Column {
  private final int id;
  private final ColumnSpec spec;

  public Column(int id, ColumnSpec spec) {
    this.id = id;
    this.spec = spec;
  }

  public int id() {
    return id;
  }

  public ColumnSpec spec() {
    return spec;
  }

  public String name() {
    return spec.name();
  }
}

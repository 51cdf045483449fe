package io.cobble.row;

import io.cobble.merge.MergeOperatorResolver;
import io.cobble.schema.FamilySchema;
import io.cobble.schema.Schema;
import java.util.HashMap;
import java.util.Map;

/** A schema with every family's {@link ColumnLayout} resolved; swapped whole on schema change. */
public final class Layouts {
  private final Schema schema;
  private final ColumnLayout[] byId;
  private final Map<String, ColumnLayout> byName = new HashMap<>();

  public Layouts(Schema schema, MergeOperatorResolver resolver) {
    this.schema = schema;
    int slots = 0;
    for (FamilySchema f : schema.families()) {
      slots = Math.max(slots, f.id() + 1);
    }
    byId = new ColumnLayout[slots];
    for (FamilySchema f : schema.families()) {
      ColumnLayout l = new ColumnLayout(f, resolver);
      byId[f.id()] = l;
      byName.put(f.name(), l);
    }
  }

  public Schema schema() {
    return schema;
  }

  public ColumnLayout byId(int familyId) {
    return familyId < byId.length ? byId[familyId] : null;
  }

  /** The family's layout; unknown names fail naming the known families. */
  public ColumnLayout require(String family) {
    if (family == null) {
      throw new IllegalArgumentException(
          "column family must not be null: families are " + schema.familyNames());
    }
    ColumnLayout l = byName.get(family);
    if (l == null) {
      throw new IllegalArgumentException(
          "unknown column family '" + family + "': families are " + schema.familyNames());
    }
    return l;
  }

  public int familySlots() {
    return byId.length;
  }
}

package io.cobble.schema;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the schema package promises: every change is a new schema with the next id and the old one
 * untouched; column ids are stable and never reused (rows store ids, so a reused id would revive a
 * dropped column's data under a new name); the encoding round-trips everything files rely on.
 */
class SchemaTest {

  private static List<Integer> ids(FamilySchema family) {
    return family.columns().stream().map(Column::id).collect(java.util.stream.Collectors.toList());
  }

  @Test
  void everyChangeIsANewSchemaWithTheNextIdAndLeavesTheOldOneAlone() {
    Schema initial = Schema.initial();
    Schema added = initial.addColumn("default", ColumnSpec.of("b"));
    Schema dropped = added.dropColumn("default", "value");
    assertEquals(initial.id() + 1, added.id());
    assertEquals(added.id() + 1, dropped.id());
    assertEquals(List.of("value"), initial.requireFamily("default").columnNames());
    assertEquals(List.of("value", "b"), added.requireFamily("default").columnNames());
    assertEquals(List.of("b"), dropped.requireFamily("default").columnNames());
  }

  @Test
  void aDroppedColumnsIdIsNeverReused() {
    Schema s =
        Schema.initial()
            .addColumn("default", ColumnSpec.of("a"))
            .dropColumn("default", "a")
            .addColumn("default", ColumnSpec.of("a"));
    FamilySchema f = s.requireFamily("default");
    assertEquals(List.of(0, 2), ids(f), "the re-added 'a' must not take the dropped 'a''s id 1");
    assertEquals(3, f.nextColumnId());
    assertEquals(1, f.indexOf("a"));
  }

  @Test
  void familiesGetTheirOwnIdsAndColumnsNumberedFromZero() {
    Schema s =
        Schema.initial()
            .addFamily("f2", Arrays.asList(ColumnSpec.of("x"), ColumnSpec.merging("n", "u64_add")))
            .addFamily("f3", List.of(ColumnSpec.of("y")));
    assertEquals(List.of("default", "f2", "f3"), s.familyNames());
    assertEquals(1, s.requireFamily("f2").id());
    assertEquals(2, s.requireFamily("f3").id());
    assertEquals(List.of(0, 1), ids(s.requireFamily("f2")));
    assertEquals("u64_add", s.requireFamily("f2").columns().get(1).spec().mergeOperator());
    assertNull(s.family("missing"));
  }

  @Test
  void invalidChangesNameWhatIsWrong() {
    Schema s = Schema.initial();
    assertMessage("already exists", () -> s.addFamily("default", List.of(ColumnSpec.of("v"))));
    assertMessage("needs at least one column", () -> s.addFamily("f", List.of()));
    assertMessage(
        "duplicate column 'v'",
        () -> s.addFamily("f", Arrays.asList(ColumnSpec.of("v"), ColumnSpec.of("v"))));
    assertMessage("already exists", () -> s.addColumn("default", ColumnSpec.of("value")));
    assertMessage("must keep one column", () -> s.dropColumn("default", "value"));
    assertMessage("columns are [value]", () -> s.dropColumn("default", "nope"));
    assertMessage("families are [default]", () -> s.requireFamily("nope"));
    assertMessage("non-empty", () -> ColumnSpec.of(""));
  }

  @Test
  void encodingRoundTripsIdsOperatorsAndDefaults() {
    Schema s =
        Schema.initial()
            .addColumn("default", new ColumnSpec("d", null, "dflt".getBytes(UTF_8)))
            .addColumn("default", new ColumnSpec("empty", null, new byte[0]))
            .dropColumn("default", "value")
            .addFamily("counters", List.of(ColumnSpec.merging("n", "u64_add")));
    ByteWriter w = new ByteWriter(64);
    s.encode(w);
    Schema back = Schema.decode(new ByteReader(w.toByteArray()));

    assertEquals(s.id(), back.id());
    assertEquals(s.familyNames(), back.familyNames());
    for (FamilySchema f : s.families()) {
      FamilySchema g = back.requireFamily(f.name());
      assertEquals(f.id(), g.id());
      assertEquals(f.nextColumnId(), g.nextColumnId());
      assertEquals(ids(f), ids(g));
      for (int i = 0; i < f.columnCount(); i++) {
        assertEquals(f.columns().get(i).spec(), g.columns().get(i).spec());
      }
    }
    FamilySchema d = back.requireFamily("default");
    assertArrayEquals(
        "dflt".getBytes(UTF_8), d.columns().get(d.indexOf("d")).spec().defaultValue());
    assertArrayEquals(
        new byte[0],
        d.columns().get(d.indexOf("empty")).spec().defaultValue(),
        "an empty default is a default, not 'no default'");
    assertEquals("u64_add", back.requireFamily("counters").columns().get(0).spec().mergeOperator());
    assertNull(d.columns().get(d.indexOf("d")).spec().mergeOperator());
  }

  @Test
  void aColumnSpecKeepsItsOwnCopyOfTheDefault() {
    byte[] def = "a".getBytes(UTF_8);
    ColumnSpec spec = new ColumnSpec("c", null, def);
    def[0] = 'z';
    spec.defaultValue()[0] = 'y';
    assertArrayEquals("a".getBytes(UTF_8), spec.defaultValue());
  }

  private static void assertMessage(String expected, Runnable change) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, change::run);
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }
}

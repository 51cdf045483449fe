package io.cobble.row;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.Column;
import io.cobble.schema.ColumnSpec;
import io.cobble.schema.FamilySchema;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RowStateTest {

  private static final ColumnLayout LAYOUT =
      new ColumnLayout(
          new FamilySchema(
              1,
              "f",
              Arrays.asList(
                  new Column(0, ColumnSpec.of("a")),
                  new Column(1, ColumnSpec.of("b")),
                  new Column(2, ColumnSpec.of("c"))),
              3),
          name -> null);

  /** The scan without decoding answers exactly what decode + isFinal answers. */
  @Test
  void replacesOlderAgreesWithDecodedIsFinal() {
    Random random = new Random(7);
    RowState state = new RowState();
    RowState decoded = new RowState();
    ByteReader reader = new ByteReader();
    int replacing = 0;
    for (int i = 0; i < 5_000; i++) {
      state.reset(LAYOUT);
      for (int c = 0; c < LAYOUT.size(); c++) {
        int kind = random.nextInt(8);
        if (kind < 4) {
          byte[] value = new byte[random.nextInt(300)];
          random.nextBytes(value);
          state.set(c, RowState.PUT, value, false, random.nextInt(3) * 1_000_000_007L, 0);
        } else if (kind < 6) {
          state.set(c, RowState.DELETE, null, false, 0, 0);
        } else if (kind == 6) {
          state.set(c, RowState.MERGE, new byte[] {1}, false, 0, 12345);
        }
      }
      ByteWriter w = new ByteWriter(16);
      w.writeByte(0x55);
      state.encode(w);
      byte[] row = Arrays.copyOf(w.array(), w.size() + 3);
      boolean expected = decoded.decode(LAYOUT, row, 1, w.size() - 1, reader).isFinal(null);
      assertEquals(expected, RowState.replacesOlder(LAYOUT, row, 1, w.size() - 1), "row " + i);
      replacing += expected ? 1 : 0;
    }
    assertTrue(replacing > 100 && replacing < 4_900, "both answers are exercised: " + replacing);
  }

  @Test
  void aCutOffDeltaDoesNotReplace() {
    RowState state = new RowState().reset(LAYOUT);
    for (int c = 0; c < LAYOUT.size(); c++) {
      state.set(c, RowState.PUT, new byte[200], false, 0, 0);
    }
    byte[] row = state.encode();
    assertTrue(RowState.replacesOlder(LAYOUT, row, 0, row.length));
    for (int cut = 0; cut < row.length; cut += 7) {
      assertFalse(RowState.replacesOlder(LAYOUT, row, 0, cut), "cut at " + cut);
    }
  }

  /**
   * A row the scan calls plain is exactly what decode + encode would write (so storing it as it is
   * changes nothing) and has the decoded max expiry and oldest merge write time; every row of
   * PUT/MERGE/DELETE columns with inline values within the limit is plain, and no other row is. At
   * the bottom of the tree (nothing expired to drop) only rows of PUT columns are plain, since
   * merges become puts there. Seed: -Dcobble.test.seed.
   */
  @Test
  void aPlainRowIsExactlyOneThatReencodesUnchanged() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    Random random = new Random(seed);
    PlainRow plainRow = new PlainRow();
    RowState state = new RowState();
    RowState decoded = new RowState();
    ByteReader reader = new ByteReader();
    int plain = 0;
    for (int i = 0; i < 5_000; i++) {
      state.reset(LAYOUT);
      boolean expectPlain = true;
      boolean onlyPuts = true;
      long minMergeTime = Long.MAX_VALUE;
      boolean any = false;
      long limit = random.nextBoolean() ? 0 : 200;
      for (int c = 0; c < LAYOUT.size(); c++) {
        int kind = random.nextInt(10);
        boolean pointer = random.nextInt(20) == 0;
        if (kind < 5) {
          byte[] value = new byte[random.nextInt(260)];
          random.nextBytes(value);
          state.set(c, RowState.PUT, value, pointer, random.nextInt(3) * 1_000_000_007L, 0);
          expectPlain &= !pointer && (limit == 0 || value.length <= limit);
        } else if (kind < 7) {
          state.set(c, RowState.DELETE, null, pointer, 0, 0);
          expectPlain &= !pointer;
          onlyPuts = false;
        } else if (kind == 7) {
          byte[] operand = new byte[random.nextInt(260)];
          random.nextBytes(operand);
          long writeTime = random.nextInt(1 << 20) * 1_000_003L;
          state.set(c, RowState.MERGE, operand, pointer, random.nextInt(3) * 7_000L, writeTime);
          expectPlain &= !pointer && (limit == 0 || operand.length <= limit);
          onlyPuts = false;
          minMergeTime = Math.min(minMergeTime, writeTime);
        } else {
          continue;
        }
        any = true;
      }
      expectPlain &= any;
      ByteWriter w = new ByteWriter(16);
      w.writeByte(0x55);
      state.encode(w);
      byte[] row = Arrays.copyOf(w.array(), w.size() + 3);
      String what = "row " + i + " (seed " + seed + ")";
      assertEquals(
          expectPlain && onlyPuts,
          plainRow.readBottom(LAYOUT, row, 1, w.size() - 1, limit, -1),
          "bottom: " + what);
      assertEquals(expectPlain, plainRow.read(LAYOUT, row, 1, w.size() - 1, limit), what);
      if (expectPlain) {
        plain++;
        assertEquals(minMergeTime, plainRow.minMergeWriteTime(), "merge " + what);
        decoded.decode(LAYOUT, row, 1, w.size() - 1, reader);
        assertEquals(decoded.maxExpiry(), plainRow.expiry(), what);
        ByteWriter again = new ByteWriter(16);
        decoded.encode(again);
        assertArrayEquals(
            Arrays.copyOfRange(row, 1, w.size()), Arrays.copyOf(again.array(), again.size()), what);
      }
    }
    assertTrue(plain > 500 && plain < 4_500, "both answers are exercised: " + plain);
  }

  @Test
  void aCutOffOrForeignRowIsNotPlain() {
    RowState state = new RowState().reset(LAYOUT);
    state.set(0, RowState.PUT, new byte[200], false, 0, 0);
    state.set(2, RowState.DELETE, null, false, 0, 0);
    byte[] row = state.encode();
    PlainRow plainRow = new PlainRow();
    assertTrue(plainRow.read(LAYOUT, row, 0, row.length, 0));
    assertEquals(0, plainRow.expiry());
    for (int cut = 0; cut < row.length; cut += 7) {
      assertFalse(plainRow.read(LAYOUT, row, 0, cut, 0), "cut " + cut);
    }
    ColumnLayout dropped =
        new ColumnLayout(
            new FamilySchema(
                2,
                "f",
                Arrays.asList(new Column(1, ColumnSpec.of("b")), new Column(2, ColumnSpec.of("c"))),
                3),
            name -> null);
    assertFalse(
        plainRow.read(dropped, row, 0, row.length, 0),
        "a row holding a dropped column is re-encoded without it");
  }

  /**
   * A row of puts, deletes and merges without defaults, rewritten by {@link RowState#mergesToPuts},
   * is byte for byte what decode, {@link RowState#resolveBottom} and encode write; a row with a
   * value-log pointer, a merge over a default or cut-off bytes is refused.
   */
  @Test
  void mergesToPutsWritesWhatResolvingAtTheBottomWrites() {
    ColumnLayout layout =
        new ColumnLayout(
            new FamilySchema(
                1,
                "f",
                Arrays.asList(
                    new Column(0, ColumnSpec.of("a")),
                    new Column(1, ColumnSpec.merging("l", "list_append")),
                    new Column(2, ColumnSpec.merging("c", "concat"))),
                3),
            name -> null);
    Random random = new Random(11);
    RowState state = new RowState();
    ByteWriter out = new ByteWriter(16);
    int merges = 0;
    for (int i = 0; i < 5_000; i++) {
      state.reset(layout);
      for (int c = 0; c < layout.size(); c++) {
        int kind = random.nextInt(4);
        byte[] value = new byte[random.nextInt(200)];
        random.nextBytes(value);
        long expiry = random.nextBoolean() ? 0 : 1L + random.nextInt(1 << 30);
        if (kind == 1) {
          state.set(c, RowState.PUT, value, false, expiry, 0);
        } else if (kind == 2) {
          state.set(c, RowState.DELETE, null, false, 0, 0);
        } else if (kind == 3 && c > 0) {
          state.set(c, RowState.MERGE, value, false, expiry, 1L + random.nextInt(1 << 30));
          merges++;
        }
      }
      ByteWriter w = new ByteWriter(16);
      w.writeByte(0x55);
      state.encode(w);
      byte[] row = Arrays.copyOf(w.array(), w.size() + 3);
      state.resolveBottom(pointer -> null);
      byte[] expected = state.encode();
      assertTrue(RowState.mergesToPuts(layout, row, 1, w.size() - 1, out), "row " + i);
      assertArrayEquals(expected, Arrays.copyOf(out.array(), out.size()), "row " + i);
      for (int cut = 1; cut < w.size() - 1; cut += 5) {
        assertFalse(RowState.mergesToPuts(layout, row, 1, cut, out), "row " + i + " cut " + cut);
      }
    }
    assertTrue(merges > 1_000, "merges exercised: " + merges);

    RowState pointer = new RowState().reset(layout);
    pointer.set(1, RowState.MERGE, new byte[12], true, 0, 5);
    byte[] withPointer = pointer.encode();
    assertFalse(RowState.mergesToPuts(layout, withPointer, 0, withPointer.length, out));
    ColumnLayout withDefault =
        new ColumnLayout(
            new FamilySchema(
                1,
                "f",
                Arrays.asList(new Column(0, new ColumnSpec("c", "concat", new byte[] {7}))),
                1),
            name -> null);
    RowState merge = new RowState().reset(withDefault);
    merge.set(0, RowState.MERGE, new byte[] {1}, false, 0, 5);
    byte[] overDefault = merge.encode();
    assertFalse(RowState.mergesToPuts(withDefault, overDefault, 0, overDefault.length, out));
  }

  /**
   * {@link RowState#inlinePuts} against the decoded row: true exactly when every projected column
   * is an inline PUT without expiry, with each span on that column's value. Layouts of one column
   * (the single-column fast path, also with a column id past one varint byte) and of three, rows
   * with values around the one-byte length limit, expiries, deletes, merges and pointers, each read
   * at an offset inside a longer array.
   */
  @Test
  void inlinePutsAgreesWithTheDecodedRow() {
    ColumnLayout single = layout(new Column(0, ColumnSpec.of("v")));
    ColumnLayout wideId = layout(new Column(200, ColumnSpec.of("v")));
    Random random = new Random(11);
    RowState state = new RowState();
    RowState decoded = new RowState();
    int inline = 0;
    for (int i = 0; i < 20_000; i++) {
      ColumnLayout layout = i % 3 == 0 ? LAYOUT : i % 3 == 1 ? single : wideId;
      state.reset(layout);
      for (int c = 0; c < layout.size(); c++) {
        int kind = random.nextInt(10);
        if (kind < 6) {
          byte[] value = new byte[kind < 4 ? random.nextInt(130) : random.nextInt(400)];
          random.nextBytes(value);
          // Expiries of one varint byte and of several.
          long expiry =
              random.nextInt(4) > 0
                  ? 0
                  : random.nextBoolean() ? 1_000_000_007L : 1 + random.nextInt(100);
          state.set(c, RowState.PUT, value, random.nextInt(20) == 0, expiry, 0);
        } else if (kind < 8) {
          state.set(c, RowState.DELETE, null, false, 0, 0);
        } else if (kind == 8) {
          state.set(c, RowState.MERGE, new byte[] {1}, false, 0, 12345);
        }
      }
      byte[] encoded = state.encode();
      int off = random.nextInt(5);
      byte[] row = new byte[off + encoded.length + random.nextInt(5)];
      System.arraycopy(encoded, 0, row, off, encoded.length);
      decoded.decode(layout, encoded);
      int[] positions =
          layout.size() == 1 ? new int[] {0} : i % 2 == 0 ? new int[] {0, 2} : new int[] {1};
      long[] spans = new long[positions.length];
      boolean expected = true;
      for (int p : positions) {
        expected &=
            decoded.kind(p) == RowState.PUT && !decoded.isPointer(p) && decoded.expiry(p) == 0;
      }
      String context = "row " + i + " " + Arrays.toString(encoded);
      assertEquals(
          expected,
          RowState.inlinePuts(layout, row, off, encoded.length, positions, spans),
          context);
      if (expected && layout.size() == 1) {
        // A single-column row cut short anywhere is not one (its value would pass the end).
        int cut = random.nextInt(encoded.length);
        assertFalse(
            RowState.inlinePuts(layout, row, off, cut, positions, new long[1]),
            context + " cut at " + cut);
      }
      if (expected) {
        inline++;
        for (int k = 0; k < positions.length; k++) {
          int from = (int) (spans[k] >>> 32);
          assertArrayEquals(
              decoded.value(positions[k]),
              Arrays.copyOfRange(row, from, from + (int) spans[k]),
              context);
        }
      }
    }
    assertTrue(inline > 2_000 && inline < 18_000, "both answers are exercised: " + inline);
  }

  private static ColumnLayout layout(Column column) {
    return new ColumnLayout(
        new FamilySchema(1, "f", Arrays.asList(column), column.id() + 1), name -> null);
  }
}

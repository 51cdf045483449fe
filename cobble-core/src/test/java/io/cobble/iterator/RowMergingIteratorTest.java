package io.cobble.iterator;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CorruptionException;
import io.cobble.merge.MergeOperator;
import io.cobble.row.ColumnLayout;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.schema.Column;
import io.cobble.schema.ColumnSpec;
import io.cobble.schema.FamilySchema;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * What {@link RowMergingIterator} promises: one row per key in ascending key order over sources
 * given newest first; per column the newest put or delete wins, and merge operands fold onto older
 * values oldest first, however the sources interleave.
 */
class RowMergingIteratorTest {

  /** Column 0 merges with this order-revealing operator; column 1 is a plain column. */
  private static final MergeOperator JOIN =
      new MergeOperator() {
        @Override
        public String name() {
          return "join";
        }

        @Override
        public byte[] merge(byte[] older, byte[] newer) {
          return (new String(older, UTF_8) + "," + new String(newer, UTF_8)).getBytes(UTF_8);
        }
      };

  private static final ColumnLayout LAYOUT =
      new ColumnLayout(
          new FamilySchema(
              0,
              "f",
              Arrays.asList(
                  new Column(0, ColumnSpec.merging("m", "join")),
                  new Column(1, ColumnSpec.of("p"))),
              2),
          name -> name.equals("join") ? JOIN : null);

  private static final ValueLoader NO_POINTERS =
      pointer -> {
        throw new AssertionError("no value is separated in these rows");
      };

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  /** A row: per column "put:x", "merge:x", "delete" or null (absent). */
  private static byte[] row(String m, String p) {
    RowState r = new RowState().reset(LAYOUT);
    String[] cells = {m, p};
    for (int i = 0; i < cells.length; i++) {
      if (cells[i] == null) {
        continue;
      }
      if (cells[i].equals("delete")) {
        r.set(i, RowState.DELETE, null, false, 0, 0);
      } else if (cells[i].startsWith("put:")) {
        r.set(i, RowState.PUT, b(cells[i].substring(4)), false, 0, 0);
      } else {
        r.set(i, RowState.MERGE, b(cells[i].substring(6)), false, 0, 0);
      }
    }
    return r.encode();
  }

  private static RowMergingIterator merging(SortedListIterator... newestFirst) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < newestFirst.length; i++) {
      names.add("source-" + i);
    }
    return new RowMergingIterator(Arrays.asList(newestFirst), names, LAYOUT, NO_POINTERS);
  }

  private static String cell(RowState r, int i) {
    switch (r.kind(i)) {
      case RowState.ABSENT:
        return "-";
      case RowState.DELETE:
        return "deleted";
      case RowState.PUT:
        return new String(r.value(i), UTF_8);
      default:
        return "merge(" + new String(r.value(i), UTF_8) + ")";
    }
  }

  private static List<String> drain(RowMergingIterator it) {
    List<String> out = new ArrayList<>();
    for (; it.valid(); it.next()) {
      RowState r = it.row();
      out.add(new String(it.key(), UTF_8) + ":" + cell(r, 0) + "|" + cell(r, 1));
    }
    return out;
  }

  @Test
  void oneRowPerKeyInKeyOrderWithTheNewestPutWinning() {
    SortedListIterator newest = new SortedListIterator().add(b("b"), row("put:b2", null));
    SortedListIterator middle =
        new SortedListIterator()
            .add(b("a"), row("put:a1", null))
            .add(b("b"), row("put:b1", "put:p1"));
    SortedListIterator oldest =
        new SortedListIterator()
            .add(b("a"), row("put:a0", "put:pa"))
            .add(b("b"), row("put:b0", "put:p0"))
            .add(b("c"), row(null, "put:c0"));
    RowMergingIterator it = merging(newest, middle, oldest);
    it.seekToFirst();
    assertEquals(List.of("a:a1|pa", "b:b2|p1", "c:-|c0"), drain(it));
  }

  @Test
  void aNewerDeleteHidesOlderValuesOfItsColumnOnly() {
    SortedListIterator newer = new SortedListIterator().add(b("k"), row(null, "delete"));
    SortedListIterator older = new SortedListIterator().add(b("k"), row("put:m0", "put:p0"));
    RowMergingIterator it = merging(newer, older);
    it.seekToFirst();
    assertEquals(List.of("k:m0|deleted"), drain(it));
  }

  @Test
  void mergeOperandsFoldOldestFirstAcrossSources() {
    SortedListIterator s0 = new SortedListIterator().add(b("k"), row("merge:3", null));
    SortedListIterator s1 = new SortedListIterator().add(b("k"), row("merge:2", null));
    SortedListIterator s2 = new SortedListIterator().add(b("k"), row("put:1", null));
    RowMergingIterator it = merging(s0, s1, s2);
    it.seekToFirst();
    assertEquals(List.of("k:1,2,3|-"), drain(it));

    SortedListIterator t0 = new SortedListIterator().add(b("k"), row("merge:3", null));
    SortedListIterator t1 = new SortedListIterator().add(b("k"), row("merge:2", null));
    RowMergingIterator unresolved = merging(t0, t1);
    unresolved.seekToFirst();
    assertEquals(List.of("k:merge(2,3)|-"), drain(unresolved), "nothing older: still a merge");

    SortedListIterator u0 = new SortedListIterator().add(b("k"), row("merge:x", null));
    SortedListIterator u1 = new SortedListIterator().add(b("k"), row("delete", null));
    SortedListIterator u2 = new SortedListIterator().add(b("k"), row("put:gone", null));
    RowMergingIterator overDelete = merging(u0, u1, u2);
    overDelete.seekToFirst();
    assertEquals(List.of("k:x|-"), drain(overDelete), "a merge over a delete starts afresh");
  }

  @Test
  void seekStartsAtTheFirstKeyAtOrAfterTheTargetInEverySource() {
    SortedListIterator s0 =
        new SortedListIterator().add(b("a"), row("put:a", null)).add(b("d"), row("put:d", null));
    SortedListIterator s1 =
        new SortedListIterator().add(b("b"), row("put:b", null)).add(b("c"), row("put:c", null));
    RowMergingIterator it = merging(s0, s1);
    it.seek(b("bb"));
    assertEquals(List.of("c:c|-", "d:d|-"), drain(it));
    it.seek(b("e"));
    assertFalse(it.valid());
    it.seek(b("a"));
    assertArrayEquals(b("a"), it.key());
    it.close();
    assertTrue(s0.closed && s1.closed);
  }

  @Test
  void anUndecodableRowNamesItsSource() {
    SortedListIterator good = new SortedListIterator().add(b("k"), row("put:v", null));
    SortedListIterator bad = new SortedListIterator().add(b("k"), new byte[] {5, 9});
    RowMergingIterator it = merging(good, bad);
    CorruptionException e = assertThrows(CorruptionException.class, it::seekToFirst);
    assertTrue(e.getMessage().contains("source-1"), e.getMessage());
  }

  /**
   * A single source read against an upper bound skips comparing a key that shares, with the key
   * before it, more than the bytes that put that key below the bound; the keys it ends with are
   * still exactly those a sorted set holds below the bound. Keys of few distinct bytes make many
   * keys prefixes of the bound, of each other, and share exactly the bytes that decide.
   */
  @Test
  void aSingleSourceEndsAtTheUpperBoundAsASortedSetDoes() {
    Random random = new Random(7);
    int compared = 0;
    for (int round = 0; round < 1000; round++) {
      TreeSet<byte[]> model = new TreeSet<>(Arrays::compareUnsigned);
      int size = 1 + random.nextInt(150);
      while (model.size() < size) {
        model.add(smallAlphabetKey(random));
      }
      SortedListIterator source = new SortedListIterator();
      for (byte[] k : model) {
        source.add(k, row("put:v", null));
      }
      byte[] bound = smallAlphabetKey(random);
      byte[] from = smallAlphabetKey(random);
      RowMergingIterator it = merging(source).upperBound(bound);
      it.seek(from);
      List<String> got = new ArrayList<>();
      for (; it.valid(); it.next()) {
        got.add(new String(it.key(), UTF_8));
      }
      List<String> expected = new ArrayList<>();
      if (Arrays.compareUnsigned(from, bound) < 0) {
        for (byte[] k : model.subSet(from, true, bound, false)) {
          expected.add(new String(k, UTF_8));
        }
      }
      assertEquals(expected, got, "bound " + new String(bound, UTF_8));
      compared += got.size();
    }
    assertTrue(compared > 1000, "the rounds read " + compared + " keys");
  }

  private static byte[] smallAlphabetKey(Random random) {
    byte[] k = new byte[1 + random.nextInt(5)];
    for (int i = 0; i < k.length; i++) {
      k[i] = (byte) ('a' + random.nextInt(3));
    }
    return k;
  }

  /**
   * An upper bound ends the merge before it: the rows before the bound are those of the unbounded
   * merge, the iterator is then invalid, and no row at or after the bound is decoded (a corrupt row
   * there, which the unbounded merge reports, goes unread), whichever source reaches it first.
   */
  @Test
  void upperBoundEndsTheMergeWithoutDecodingTheRowsPastIt() {
    byte[] corrupt = {5, 9};
    SortedListIterator newest =
        new SortedListIterator()
            .add(b("a"), row("put:a2", null))
            .add(b("c"), row("merge:c2", null))
            .add(b("e"), corrupt);
    SortedListIterator oldest =
        new SortedListIterator()
            .add(b("a"), row("put:a1", "put:p"))
            .add(b("c"), row("put:c1", null))
            .add(b("d"), corrupt);
    RowMergingIterator bounded = merging(newest, oldest).upperBound(b("d"));
    bounded.seekToFirst();
    assertEquals(Arrays.asList("a:a2|p", "c:c1,c2|-"), drain(bounded));
    assertFalse(bounded.valid());
    bounded.seek(b("b"));
    assertEquals(Arrays.asList("c:c1,c2|-"), drain(bounded));

    RowMergingIterator unbounded = merging(newest, oldest);
    unbounded.seekToFirst();
    unbounded.next();
    assertThrows(CorruptionException.class, unbounded::next);

    // One source is read in place, bound and all.
    RowMergingIterator alone = merging(newest).upperBound(b("d"));
    alone.seekToFirst();
    assertEquals(Arrays.asList("a:a2|-", "c:merge(c2)|-"), drain(alone));
    assertFalse(alone.valid());

    RowMergingIterator reset =
        merging(newest, oldest)
            .upperBound(b("d"))
            .reset(new KvIterator[] {newest}, new String[] {"source-0"}, 1, LAYOUT, NO_POINTERS);
    reset.seek(b("b"));
    assertThrows(CorruptionException.class, reset::next, "reset drops the bound");
  }

  /**
   * With pass-through on, keys one source decides (no other source has them, or the newest row puts
   * or deletes every column) are held encoded as that source's row, every other key is folded, and
   * the rows seen are those of the iterator with pass-through off: seeded random sources ({@code
   * -Dcobble.test.seed}) of puts, deletes and merges.
   */
  @Test
  void passThroughHoldsTheDecidingRowEncodedAndShowsTheSameRows() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    java.util.Random random = new java.util.Random(seed);
    String[] cells = {null, "delete", "put:a", "put:b", "merge:x", "merge:y"};
    for (int round = 0; round < 20; round++) {
      int n = 1 + random.nextInt(4);
      SortedListIterator[] plain = new SortedListIterator[n];
      SortedListIterator[] passing = new SortedListIterator[n];
      // Per key, the newest source's row, and how many sources hold the key.
      java.util.Map<String, byte[]> newest = new java.util.HashMap<>();
      java.util.Map<String, Integer> holders = new java.util.HashMap<>();
      for (int s = 0; s < n; s++) {
        plain[s] = new SortedListIterator();
        passing[s] = new SortedListIterator();
        for (int k = 0; k < 30; k++) {
          if (random.nextInt(3) != 0) {
            continue;
          }
          String m = cells[random.nextInt(cells.length)];
          String p = cells[random.nextInt(4)];
          if (m == null && p == null) {
            p = "put:p" + s;
          }
          byte[] key = b(String.format("k%02d", k));
          byte[] value = row(m, p);
          plain[s].add(key, value);
          passing[s].add(key, value);
          newest.putIfAbsent(new String(key, UTF_8), value);
          holders.merge(new String(key, UTF_8), 1, Integer::sum);
        }
      }
      String note = "round " + round + " (seed " + seed + ")";
      RowMergingIterator expected = merging(plain);
      RowMergingIterator actual = merging(passing).passThrough(true);
      expected.seekToFirst();
      List<String> want = drain(expected);
      List<String> got = new ArrayList<>();
      for (actual.seekToFirst(); actual.valid(); actual.next()) {
        String key = new String(actual.key(), UTF_8);
        byte[] first = newest.get(key);
        boolean decided =
            holders.get(key) == 1 || RowState.replacesOlder(LAYOUT, first, 0, first.length);
        assertEquals(decided, actual.hasEncodedRow(), key + ", " + note);
        if (decided) {
          assertArrayEquals(
              first,
              Arrays.copyOfRange(
                  actual.encodedRow(),
                  actual.encodedOffset(),
                  actual.encodedOffset() + actual.encodedLength()),
              key + ", " + note);
        }
        RowState r = actual.row();
        got.add(key + ":" + cell(r, 0) + "|" + cell(r, 1));
      }
      assertEquals(want, got, note);
    }
  }

  /**
   * Model: a TreeMap with its own comparator holding each key's newest put. Seeded random sources
   * ({@code -Dcobble.test.seed}) under keys drawn to stress the merge's prefix words (lengths
   * around 8, 16 and 24, long shared prefixes, zero bytes that tie with padding, keys served in
   * place between bytes of 0xFF), 1 to 16 sources: every key once, in order, with the newest
   * source's value, from the first key or from a seek (and from a second seek part way through),
   * pass-through on or off.
   */
  @Test
  void mergesLikeATreeMapOfTheNewestPuts() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    java.util.Random random = new java.util.Random(seed);
    byte[] alphabet = {0, 0, 1, (byte) 0x7F, (byte) 0x80, (byte) 0xFF};
    int[] lengths = {0, 1, 7, 8, 14, 15, 16, 17, 22, 23, 24, 25, 31};
    for (int round = 0; round < 1000; round++) {
      byte[][] pool = new byte[1 + random.nextInt(60)][];
      for (int i = 0; i < pool.length; i++) {
        byte[] k = new byte[lengths[random.nextInt(lengths.length)]];
        if (i > 0 && random.nextBoolean()) {
          byte[] base = pool[random.nextInt(i)];
          System.arraycopy(base, 0, k, 0, Math.min(k.length, base.length));
        } else {
          for (int j = 0; j < k.length; j++) {
            k[j] = alphabet[random.nextInt(alphabet.length)];
          }
        }
        if (k.length > 0) {
          k[random.nextInt(k.length)] = alphabet[random.nextInt(alphabet.length)];
        }
        pool[i] = k;
      }
      // Up to 16 sources, so the heap has several levels below the root.
      int n = 1 + random.nextInt(16);
      java.util.TreeMap<byte[], String> model =
          new java.util.TreeMap<>(RowMergingIteratorTest::lexicographic);
      SortedListIterator[] sources = new SortedListIterator[n];
      for (int s = n - 1; s >= 0; s--) {
        java.util.TreeMap<byte[], String> own =
            new java.util.TreeMap<>(RowMergingIteratorTest::lexicographic);
        for (byte[] k : pool) {
          if (random.nextInt(3) == 0) {
            own.put(k, "s" + s);
          }
        }
        sources[s] = new SortedListIterator();
        for (java.util.Map.Entry<byte[], String> e : own.entrySet()) {
          sources[s].add(e.getKey(), row(null, "put:" + e.getValue()));
        }
        model.putAll(own);
      }
      byte[] target = random.nextBoolean() ? null : pool[random.nextInt(pool.length)];
      List<String> want = new ArrayList<>();
      for (java.util.Map.Entry<byte[], String> e :
          (target == null ? model : model.tailMap(target, true)).entrySet()) {
        want.add(Arrays.toString(e.getKey()) + "=" + e.getValue());
      }
      RowMergingIterator it = merging(sources).passThrough(random.nextBoolean());
      if (target == null) {
        it.seekToFirst();
      } else {
        it.seek(target);
      }
      assertEquals(want, rest(it), "round " + round + " (seed " + seed + ")");
      // Sought again part way through a second pass: the heap is rebuilt, nothing kept from
      // where it stood.
      it.seekToFirst();
      for (int i = random.nextInt(model.size() + 1); i > 0 && it.valid(); i--) {
        it.next();
      }
      byte[] again = pool[random.nextInt(pool.length)];
      want.clear();
      for (java.util.Map.Entry<byte[], String> e : model.tailMap(again, true).entrySet()) {
        want.add(Arrays.toString(e.getKey()) + "=" + e.getValue());
      }
      it.seek(again);
      assertEquals(want, rest(it), "round " + round + " again (seed " + seed + ")");
    }
  }

  /** The rows from the iterator's position on, as key=value of column 1. */
  private static List<String> rest(RowMergingIterator it) {
    List<String> got = new ArrayList<>();
    for (; it.valid(); it.next()) {
      got.add(Arrays.toString(it.key()) + "=" + cell(it.row(), 1));
    }
    return got;
  }

  /** Unsigned lexicographic order, shorter first on a shared prefix: the model's comparator. */
  private static int lexicographic(byte[] a, byte[] b) {
    for (int i = 0; i < Math.min(a.length, b.length); i++) {
      int d = (a[i] & 0xFF) - (b[i] & 0xFF);
      if (d != 0) {
        return d;
      }
    }
    return a.length - b.length;
  }

  @Test
  void anUndecodableRowHeldEncodedNamesItsSourceWhenDecoded() {
    SortedListIterator good = new SortedListIterator().add(b("a"), row("put:v", null));
    SortedListIterator bad = new SortedListIterator().add(b("k"), new byte[] {5, 9});
    RowMergingIterator it = merging(good, bad).passThrough(true);
    it.seekToFirst();
    it.next();
    assertTrue(it.hasEncodedRow());
    CorruptionException e = assertThrows(CorruptionException.class, it::row);
    assertTrue(e.getMessage().contains("source-1"), e.getMessage());
  }
}

package io.cobble.merge;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.schema.ColumnSpec;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MergeOperatorTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static byte[] list(String... elements) {
    byte[][] e = new byte[elements.length][];
    for (int i = 0; i < e.length; i++) {
      e[i] = b(elements[i]);
    }
    return ListCodec.encode(Arrays.asList(e));
  }

  private static List<String> strings(byte[] list) {
    return ListCodec.decode(list).stream()
        .map(x -> new String(x, UTF_8))
        .collect(java.util.stream.Collectors.toList());
  }

  @Test
  void countersWrapAndValidateWidth() {
    MergeOperator u32 = MergeOperators.resolve("u32_add", null);
    assertEquals(
        1, U32AddOperator.decode(u32.merge(U32AddOperator.encode(-1), U32AddOperator.encode(2))));
    MergeOperator u64 = MergeOperators.resolve("u64_add", null);
    assertEquals(
        Long.MIN_VALUE,
        U64AddOperator.decode(
            u64.merge(U64AddOperator.encode(Long.MAX_VALUE), U64AddOperator.encode(1))));
    assertThrows(IllegalArgumentException.class, () -> u32.validateOperand(new byte[8]));
    assertThrows(IllegalArgumentException.class, () -> u64.validateOperand(new byte[4]));
  }

  @Test
  void listCapsAreAssociativeForFirstAndLast() {
    MergeOperator last = MergeOperators.resolve("list_append:max=3,retain=last", null);
    MergeOperator first = MergeOperators.resolve("list_append:max=3,retain=first", null);
    byte[] a = list("1", "2");
    byte[] c = list("3", "4");
    byte[] d = list("5");
    for (MergeOperator op : new MergeOperator[] {last, first}) {
      byte[] left = op.merge(op.merge(a, c), d);
      byte[] right = op.merge(a, op.merge(c, d));
      assertArrayEquals(left, right, op.name());
    }
    assertEquals(Arrays.asList("3", "4", "5"), strings(last.merge(last.merge(a, c), d)));
    assertEquals(Arrays.asList("1", "2", "3"), strings(first.merge(first.merge(a, c), d)));
    assertThrows(IllegalArgumentException.class, () -> last.validateOperand(new byte[] {5, 1}));
    assertThrows(
        IllegalArgumentException.class, () -> MergeOperators.resolve("list_append:max=x", null));
  }

  /**
   * A list operand is accepted exactly when it parses as length-prefixed elements to its last byte:
   * seeded operands of equal-length elements (the fixed-stride check) and of mixed lengths, some
   * with one byte changed or cut off, judged by a walk written here.
   */
  @Test
  void listOperandIsAcceptedExactlyWhenItParsesAsElements() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    java.util.Random random = new java.util.Random(seed);
    MergeOperator op = MergeOperators.resolve("list_append", null);
    int accepted = 0;
    for (int round = 0; round < 20_000; round++) {
      java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
      int elements = random.nextInt(6);
      int fixed = random.nextBoolean() ? random.nextInt(3) * 60 : -1;
      for (int i = 0; i < elements; i++) {
        int length = fixed >= 0 ? fixed : random.nextInt(200);
        if (length >= 128) {
          out.write(0x80 | (length & 0x7F));
          out.write(length >>> 7);
        } else {
          out.write(length);
        }
        out.write(new byte[length], 0, length);
      }
      byte[] operand = out.toByteArray();
      if (operand.length > 0 && random.nextBoolean()) {
        if (random.nextBoolean()) {
          operand[random.nextInt(operand.length)] = (byte) random.nextInt(256);
        } else {
          operand = Arrays.copyOf(operand, random.nextInt(operand.length));
        }
      }
      boolean parses = parsesAsElements(operand);
      String what = "operand " + Arrays.toString(operand) + " (seed " + seed + ")";
      if (parses) {
        op.validateOperand(operand);
        accepted++;
      } else {
        byte[] bad = operand;
        assertThrows(IllegalArgumentException.class, () -> op.validateOperand(bad), what);
      }
    }
    assertTrue(accepted > 5_000 && accepted < 18_000, "accepted " + accepted);
  }

  /** Walks varint-length-prefixed elements: true when the last one ends at the operand's end. */
  private static boolean parsesAsElements(byte[] operand) {
    int p = 0;
    while (p < operand.length) {
      long length = 0;
      int shift = 0;
      while (true) {
        if (p == operand.length || shift > 63) {
          return false;
        }
        int b = operand[p++] & 0xFF;
        length |= (long) (b & 0x7F) << shift;
        shift += 7;
        if (b < 0x80) {
          break;
        }
      }
      if (length > operand.length - p) {
        return false;
      }
      p += (int) length;
    }
    return true;
  }

  @Test
  void elementTtlStoresExpiryPerElementAndFiltersOnRead() {
    MergeOperator op = MergeOperators.resolve("list_append:element_ttl=true", null);
    assertTrue(op.elementTtl());
    byte[] stored = op.merge(op.toStored(list("a", "b"), 100), op.toStored(list("c"), 0));
    assertEquals(Arrays.asList("a", "b", "c"), strings(op.toUser(stored, 50)));
    assertEquals(Arrays.asList("c"), strings(op.toUser(stored, 100)));
  }

  /** A custom operator: keeps the lexicographically larger value. */
  static final class MaxOperator implements MergeOperator {
    @Override
    public String name() {
      return "max";
    }

    @Override
    public byte[] merge(byte[] older, byte[] newer) {
      return java.util.Arrays.compareUnsigned(older, newer) >= 0 ? older : newer;
    }
  }

  @Test
  void customOperatorsComeFromTheResolverAndMustBeThereOnReopen() {
    Config config =
        Config.builder()
            .mergeOperatorResolver(name -> name.equals("max") ? new MaxOperator() : null)
            .build();
    try (Db db = Db.open(dir, config)) {
      db.createFamily("m", Arrays.asList(ColumnSpec.merging("best", "max")));
      db.merge(0, "m", b("k"), 0, b("b"));
      db.flush();
      db.merge(0, "m", b("k"), 0, b("a"));
      db.merge(0, "m", b("k"), 0, b("c"));
      db.flush();
      db.merge(0, "m", b("k"), 0, b("bb"));
      assertArrayEquals(b("c"), db.get(0, "m", b("k"))[0]);
      db.compactAll();
      assertArrayEquals(b("c"), db.get(0, "m", b("k"))[0]);
    }
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Db.open(dir, Config.defaults()));
    assertTrue(e.getMessage().contains("'max'"), e.getMessage());
    try (Db db = Db.open(dir, config)) {
      assertArrayEquals(b("c"), db.get(0, "m", b("k"))[0]);
    }
  }
}

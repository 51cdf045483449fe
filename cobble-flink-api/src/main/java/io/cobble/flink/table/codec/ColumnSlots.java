package io.cobble.flink.table.codec;

import java.io.Serializable;
import java.util.Arrays;

/**
 * Which Cobble column holds each value (non-key) column of a table. A plain table stores value
 * column {@code i} in Cobble column {@code i}. A catalog table keeps a column's Cobble column for
 * life: a dropped column leaves its Cobble column unused (written as NULL from then on), and an
 * appended column takes a new one, so rows written before an ALTER TABLE stay readable.
 */
public final class ColumnSlots implements Serializable {

  private static final long serialVersionUID = 1L;

  private final int[] slots;
  private final int count;

  /**
   * @param slots the Cobble column of each value column, in table order; distinct, each below
   *     {@code count}
   * @param count the number of Cobble columns the rows have, used or not
   */
  public ColumnSlots(int[] slots, int count) {
    boolean[] used = new boolean[Math.max(count, 0)];
    for (int slot : slots) {
      if (slot < 0 || slot >= count || used[slot]) {
        throw new IllegalArgumentException(
            "Cobble columns "
                + Arrays.toString(slots)
                + " are not distinct columns below "
                + count);
      }
      used[slot] = true;
    }
    this.slots = slots.clone();
    this.count = count;
  }

  /** Value column {@code i} in Cobble column {@code i}. */
  public static ColumnSlots identity(int valueColumns) {
    int[] slots = new int[valueColumns];
    for (int i = 0; i < valueColumns; i++) {
      slots[i] = i;
    }
    return new ColumnSlots(slots, valueColumns);
  }

  public int valueColumns() {
    return slots.length;
  }

  /** The Cobble column of value column {@code i}. */
  public int slot(int i) {
    return slots[i];
  }

  public int[] slots() {
    return slots.clone();
  }

  /** The number of Cobble columns, including unused ones. */
  public int count() {
    return count;
  }

  public boolean isIdentity() {
    return equals(identity(slots.length));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ColumnSlots
        && count == ((ColumnSlots) o).count
        && Arrays.equals(slots, ((ColumnSlots) o).slots);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(slots) * 31 + count;
  }

  @Override
  public String toString() {
    return Arrays.toString(slots) + " of " + count;
  }
}

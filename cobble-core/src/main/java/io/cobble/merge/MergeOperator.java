package io.cobble.merge;

/**
 * Combines merge operands of one column. Must be associative: the engine folds operands eagerly in
 * memtables, at compaction and at read time, in whatever grouping is convenient.
 */
public interface MergeOperator {
  /** The name persisted in the schema; a resolver must map it back to an equal operator. */
  String name();

  /** Combines an older value (or operand) with a newer operand. */
  byte[] merge(byte[] older, byte[] newer);

  /**
   * Whether {@link #merge} returns exactly the bytes of {@code older} followed by those of {@code
   * newer}, so a fold of many operands may copy their bytes instead of calling it pairwise.
   */
  default boolean concatenates() {
    return false;
  }

  /** Rejects an operand the operator cannot combine, naming what it expects. */
  default void validateOperand(byte[] operand) {}

  /**
   * Whether every element carries its own expiry (list append with element TTL). Such columns keep
   * no whole-value expiry; {@link #toStored} stamps each element instead.
   */
  default boolean elementTtl() {
    return false;
  }

  /** Converts a caller's value or operand into the stored form, given the write's expiry. */
  default byte[] toStored(byte[] value, long expiryMillis) {
    return value;
  }

  /** Converts a stored value into what readers see at {@code nowMillis}. */
  default byte[] toUser(byte[] stored, long nowMillis) {
    return stored;
  }
}

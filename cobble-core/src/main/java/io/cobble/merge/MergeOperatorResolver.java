package io.cobble.merge;

/** Supplies custom merge operators by name; returns null for names it does not know. */
@FunctionalInterface
public interface MergeOperatorResolver {
  MergeOperator resolve(String name);
}

package io.cobble.row;

import io.cobble.merge.MergeOperator;
import io.cobble.merge.MergeOperatorResolver;
import io.cobble.merge.MergeOperators;
import io.cobble.schema.Column;
import io.cobble.schema.FamilySchema;
import java.util.Arrays;

/**
 * A family's columns resolved for the engine: positions, stable ids, merge operators and defaults.
 * Built once per schema version; rows map persisted column ids onto these positions.
 */
public final class ColumnLayout {
  private final FamilySchema family;
  private final int[] ids;
  private final int[] positionById;
  private final MergeOperator[] operators;
  private final byte[][] userDefaults;
  private final byte[][] storedDefaults;

  public ColumnLayout(FamilySchema family, MergeOperatorResolver resolver) {
    this.family = family;
    int n = family.columnCount();
    ids = new int[n];
    operators = new MergeOperator[n];
    userDefaults = new byte[n][];
    storedDefaults = new byte[n][];
    positionById = new int[family.nextColumnId()];
    Arrays.fill(positionById, -1);
    for (int i = 0; i < n; i++) {
      Column c = family.columns().get(i);
      ids[i] = c.id();
      positionById[c.id()] = i;
      operators[i] = MergeOperators.resolve(c.spec().mergeOperator(), resolver);
      userDefaults[i] = c.spec().defaultValue();
      if (userDefaults[i] != null && operators[i] != null) {
        storedDefaults[i] = operators[i].toStored(userDefaults[i], 0);
      } else {
        storedDefaults[i] = userDefaults[i];
      }
    }
  }

  public FamilySchema family() {
    return family;
  }

  public int familyId() {
    return family.id();
  }

  public int size() {
    return ids.length;
  }

  public int id(int position) {
    return ids[position];
  }

  /** Position of a persisted column id, or -1 when the column has been dropped. */
  public int position(int columnId) {
    return columnId < positionById.length ? positionById[columnId] : -1;
  }

  public MergeOperator operator(int position) {
    return operators[position];
  }

  public byte[] userDefault(int position) {
    return userDefaults[position];
  }

  public byte[] storedDefault(int position) {
    return storedDefaults[position];
  }

  /** Validates a column position from the API, naming the allowed range and column names. */
  public void checkColumn(int position) {
    if (position < 0 || position >= ids.length) {
      throw new IllegalArgumentException(
          "unknown column "
              + position
              + " in family '"
              + family.name()
              + "': valid columns are 0.."
              + (ids.length - 1)
              + " "
              + family.columnNames());
    }
  }
}

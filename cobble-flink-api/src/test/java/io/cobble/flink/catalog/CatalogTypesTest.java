package io.cobble.flink.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.SmallIntType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.TinyIntType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

/** The type changes ALTER TABLE allows, including those the SQL parser cannot express. */
class CatalogTypesTest {

  private static boolean allowed(LogicalType from, LogicalType to) {
    return !CatalogTypes.widening("c", from, to).isPresent();
  }

  @Test
  void widensWithinAFamilyOnly() {
    LogicalType[] integers = {
      new TinyIntType(), new SmallIntType(), new IntType(), new BigIntType()
    };
    for (int i = 0; i < integers.length; i++) {
      for (int j = 0; j < integers.length; j++) {
        assertEquals(j >= i, allowed(integers[i], integers[j]), integers[i] + " to " + integers[j]);
      }
    }
    assertTrue(allowed(new FloatType(), new DoubleType()));
    assertTrue(!allowed(new DoubleType(), new FloatType()));
    assertTrue(!allowed(new IntType(), new DoubleType()));
    assertTrue(!allowed(new IntType(), new DecimalType(20, 0)));
    assertTrue(allowed(new DecimalType(10, 2), new DecimalType(30, 2)));
    assertTrue(!allowed(new DecimalType(10, 2), new DecimalType(11, 3)));
    assertTrue(allowed(new TimeType(0), new TimeType(3)));
    assertTrue(!allowed(new TimeType(3), new TimeType(0)));
    assertTrue(allowed(new TimestampType(3), new TimestampType(9)));
    assertTrue(!allowed(new TimestampType(6), new TimestampType(3)));
    assertTrue(allowed(new IntType(false), new BigIntType(true)));
    assertEquals(
        Optional.of(
            "Cannot change column 'c' from INT to INT NOT NULL: a column cannot become NOT NULL."),
        CatalogTypes.widening("c", new IntType(true), new IntType(false)));
    assertTrue(!allowed(new VarCharType(VarCharType.MAX_LENGTH), new IntType()));
  }
}

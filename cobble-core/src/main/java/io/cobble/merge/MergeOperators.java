package io.cobble.merge;

/** Resolves operator names: built-ins first, then the configured resolver. */
public final class MergeOperators {
  private MergeOperators() {}

  public static MergeOperator resolve(String name, MergeOperatorResolver custom) {
    if (name == null || name.isEmpty()) {
      return null;
    }
    switch (name) {
      case ConcatOperator.NAME:
        return new ConcatOperator();
      case U32AddOperator.NAME:
        return new U32AddOperator();
      case U64AddOperator.NAME:
        return new U64AddOperator();
      default:
        break;
    }
    if (name.equals(ListAppendOperator.NAME) || name.startsWith(ListAppendOperator.NAME + ":")) {
      return ListAppendOperator.parse(name);
    }
    MergeOperator op = custom == null ? null : custom.resolve(name);
    if (op == null) {
      throw new IllegalArgumentException(
          "unknown merge operator '"
              + name
              + "': built-in are concat, u32_add, u64_add,"
              + " list_append[:max=N,retain=first|last,element_ttl=true]; others need a"
              + " MergeOperatorResolver in the Config");
    }
    return op;
  }
}

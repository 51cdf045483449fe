package io.cobble.linkage;

import java.util.Objects;

/**
 * One link from a class of ours to a class or member that may live in Flink, as the JVM resolves
 * it: by exact name and descriptor, starting from the owner the bytecode names. Member references
 * whose owner is one of our classes are kept too, since a member inherited from a Flink supertype
 * links against Flink all the same.
 */
final class FlinkReference implements Comparable<FlinkReference> {
  private static final String FLINK_PREFIX = "org/apache/flink/";

  enum Kind {
    /** A type used in code or in one of our signatures: it must exist and be accessible. */
    CLASS,
    /** Our superclass: it must exist, be a class and not be final. */
    SUPERCLASS,
    /** An interface we implement: it must exist and be an interface. */
    INTERFACE,
    /** A method invocation or method handle. */
    METHOD,
    /** A field access or field handle. */
    FIELD,
    /**
     * A method of ours that overrides a Flink method on the minor the module is compiled against.
     */
    OVERRIDE,
    /** An abstract Flink method that one of our concrete classes must implement. */
    IMPLEMENT
  }

  private final Kind kind;
  private final String from;
  private final String owner;
  private final String name;
  private final String descriptor;
  private final boolean isStatic;
  private final boolean ownerIsInterface;
  private final boolean isWrite;

  private FlinkReference(
      Kind kind,
      String from,
      String owner,
      String name,
      String descriptor,
      boolean isStatic,
      boolean ownerIsInterface,
      boolean isWrite) {
    this.kind = kind;
    this.from = from;
    this.owner = owner;
    this.name = name;
    this.descriptor = descriptor;
    this.isStatic = isStatic;
    this.ownerIsInterface = ownerIsInterface;
    this.isWrite = isWrite;
  }

  static boolean isFlink(String internalName) {
    return internalName.startsWith(FLINK_PREFIX);
  }

  static FlinkReference toClass(Kind kind, String from, String type) {
    return new FlinkReference(kind, from, type, null, null, false, false, false);
  }

  static FlinkReference toMethod(
      String from,
      String owner,
      String name,
      String descriptor,
      boolean isStatic,
      boolean ownerIsInterface) {
    return new FlinkReference(
        Kind.METHOD, from, owner, name, descriptor, isStatic, ownerIsInterface, false);
  }

  static FlinkReference toField(
      String from, String owner, String name, String descriptor, boolean isStatic, boolean write) {
    return new FlinkReference(Kind.FIELD, from, owner, name, descriptor, isStatic, false, write);
  }

  /** An OVERRIDE or IMPLEMENT link from our class to the Flink type declaring the method. */
  static FlinkReference toInherited(
      Kind kind, String from, String owner, String nameAndDescriptor) {
    int paren = nameAndDescriptor.indexOf('(');
    return new FlinkReference(
        kind,
        from,
        owner,
        nameAndDescriptor.substring(0, paren),
        nameAndDescriptor.substring(paren),
        false,
        false,
        false);
  }

  Kind kind() {
    return kind;
  }

  /** Our class holding the reference. */
  String from() {
    return from;
  }

  /** The class the bytecode names; for OVERRIDE and IMPLEMENT, the Flink type declaring it. */
  String owner() {
    return owner;
  }

  /** {@code name + descriptor} for methods, {@code name + ":" + descriptor} for fields. */
  String memberKey() {
    return kind == Kind.FIELD ? name + ":" + descriptor : name + descriptor;
  }

  boolean isStatic() {
    return isStatic;
  }

  boolean ownerIsInterface() {
    return ownerIsInterface;
  }

  boolean isWrite() {
    return isWrite;
  }

  /** What is referenced: {@code org/apache/flink/Y}, {@code Y#m(desc)} or {@code Y#f:desc}. */
  String target() {
    switch (kind) {
      case METHOD:
      case OVERRIDE:
      case IMPLEMENT:
        return owner + "#" + name + descriptor;
      case FIELD:
        return owner + "#" + name + ":" + descriptor;
      default:
        return owner;
    }
  }

  @Override
  public String toString() {
    return from + " -> " + target() + " (" + kind.name().toLowerCase() + ")";
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof FlinkReference)) {
      return false;
    }
    FlinkReference r = (FlinkReference) o;
    return kind == r.kind
        && from.equals(r.from)
        && owner.equals(r.owner)
        && Objects.equals(name, r.name)
        && Objects.equals(descriptor, r.descriptor)
        && isStatic == r.isStatic
        && ownerIsInterface == r.ownerIsInterface
        && isWrite == r.isWrite;
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, from, owner, name, descriptor, isStatic, ownerIsInterface, isWrite);
  }

  @Override
  public int compareTo(FlinkReference o) {
    return sortKey().compareTo(o.sortKey());
  }

  private String sortKey() {
    return toString() + (isStatic ? 1 : 0) + (ownerIsInterface ? 1 : 0) + (isWrite ? 1 : 0);
  }
}

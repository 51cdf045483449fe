package io.cobble.linkage;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.objectweb.asm.Opcodes;

/** Decides, on one classpath, whether each reference links and whether it reaches into Flink. */
final class ReferenceResolver {
  private final ClassPathIndex index;
  private final MemberLookup lookup;

  ReferenceResolver(ClassPathIndex index) {
    this.index = index;
    this.lookup = new MemberLookup(index);
  }

  /** What became of one reference: it ends outside Flink, links, or breaks for a reason. */
  static final class Outcome {
    static final Outcome NOT_FLINK = new Outcome(false, null);
    static final Outcome LINKS = new Outcome(true, null);

    final boolean reachesFlink;

    /** Null when it links. */
    final String problem;

    private Outcome(boolean reachesFlink, String problem) {
      this.reachesFlink = reachesFlink;
      this.problem = problem;
    }

    static Outcome broken(String problem) {
      return new Outcome(true, problem);
    }
  }

  Outcome resolve(FlinkReference ref) {
    ClassModel from = index.find(ref.from());
    switch (ref.kind()) {
      case CLASS:
        return resolveClass(ref, from);
      case SUPERCLASS:
        return resolveSupertype(ref, from, false);
      case INTERFACE:
        return resolveSupertype(ref, from, true);
      case OVERRIDE:
        return resolveOverride(ref, from);
      default:
        return resolveMember(ref, from);
    }
  }

  /**
   * The abstract methods Flink types above {@code concrete} declare, each as an IMPLEMENT
   * reference: a Flink interface that gains an abstract method breaks our class at its first call.
   */
  Set<FlinkReference> obligations(ClassModel concrete) {
    Set<FlinkReference> obligations = new TreeSet<>();
    if (concrete.isInterface() || concrete.isAbstract()) {
      return obligations;
    }
    MemberLookup.Hierarchy hierarchy = lookup.hierarchy(concrete);
    Map<String, String> abstractMethods = new LinkedHashMap<>();
    for (ClassModel type : hierarchy.classes) {
      collectAbstract(type, abstractMethods);
    }
    for (ClassModel type : hierarchy.interfaces) {
      collectAbstract(type, abstractMethods);
    }
    abstractMethods.forEach(
        (method, owner) ->
            obligations.add(
                FlinkReference.toInherited(
                    FlinkReference.Kind.IMPLEMENT, concrete.name(), owner, method)));
    return obligations;
  }

  Outcome resolveImplementation(FlinkReference obligation) {
    MemberLookup.Result selected =
        lookup.select(index.find(obligation.from()), obligation.memberKey());
    if (selected.found() && !selected.isAbstract()) {
      return Outcome.LINKS;
    }
    return Outcome.broken(
        selected.missingSupertype != null
            ? unresolvable(selected.missingSupertype)
            : "not implemented");
  }

  private static void collectAbstract(ClassModel type, Map<String, String> abstractMethods) {
    if (!FlinkReference.isFlink(type.name())) {
      return;
    }
    type.methods()
        .forEach(
            (method, access) -> {
              if ((access & Opcodes.ACC_ABSTRACT) != 0) {
                abstractMethods.putIfAbsent(method, type.name());
              }
            });
  }

  private Outcome resolveClass(FlinkReference ref, ClassModel from) {
    ClassModel target = index.find(ref.owner());
    if (target == null) {
      return Outcome.broken("missing");
    }
    return isAccessible(target, from) ? Outcome.LINKS : Outcome.broken("not public");
  }

  private Outcome resolveSupertype(FlinkReference ref, ClassModel from, boolean asInterface) {
    ClassModel target = index.find(ref.owner());
    if (target == null) {
      return Outcome.broken("missing");
    }
    if (target.isInterface() != asInterface) {
      return Outcome.broken(
          asInterface ? "changed: no longer an interface" : "changed: now an interface");
    }
    if (!asInterface && target.isFinal()) {
      return Outcome.broken("changed: now final");
    }
    return isAccessible(target, from) ? Outcome.LINKS : Outcome.broken("not public");
  }

  private Outcome resolveMember(FlinkReference ref, ClassModel from) {
    boolean flinkOwner = FlinkReference.isFlink(ref.owner());
    if (!flinkOwner && !index.isProjectClass(ref.owner())) {
      return Outcome.NOT_FLINK;
    }
    ClassModel owner = index.find(ref.owner());
    if (owner == null) {
      return Outcome.broken("missing (no such class)");
    }
    if (flinkOwner && !isAccessible(owner, from)) {
      return Outcome.broken("not public");
    }
    boolean isMethod = ref.kind() == FlinkReference.Kind.METHOD;
    if (isMethod && flinkOwner && owner.isInterface() != ref.ownerIsInterface()) {
      return Outcome.broken(
          owner.isInterface()
              ? "changed: owner is now an interface"
              : "changed: owner is now a class");
    }
    MemberLookup.Result found =
        isMethod
            ? lookup.resolveMethod(owner, ref.memberKey())
            : lookup.resolveField(owner, ref.memberKey());
    if (!found.found()) {
      if (!flinkOwner && !lookup.hierarchy(owner).touchesFlink()) {
        return Outcome.NOT_FLINK;
      }
      if (found.missingSupertype != null) {
        return Outcome.broken(unresolvable(found.missingSupertype));
      }
      return Outcome.broken(flinkOwner ? "missing" : "missing from its Flink supertypes");
    }
    if (!flinkOwner && !FlinkReference.isFlink(found.declaringClass.name())) {
      return Outcome.NOT_FLINK;
    }
    if (ref.isStatic() != found.isStatic()) {
      return Outcome.broken(ref.isStatic() ? "changed: no longer static" : "changed: now static");
    }
    if (!isAccessible(found.declaringClass, found.access, from)) {
      return Outcome.broken("not accessible (" + accessName(found.access) + ")");
    }
    if (ref.isWrite()
        && (found.access & Opcodes.ACC_FINAL) != 0
        && !found.declaringClass.name().equals(from.name())) {
      return Outcome.broken("changed: now final");
    }
    return Outcome.LINKS;
  }

  // Our method no longer overriding anything is silent at link time but means Flink stops
  // calling it; overriding a method that became final fails class loading.
  private Outcome resolveOverride(FlinkReference ref, ClassModel from) {
    MemberLookup.Hierarchy hierarchy = lookup.hierarchy(from);
    for (ClassModel type : hierarchy.classes) {
      if (declaresOverridable(type, ref.memberKey())) {
        return (type.method(ref.memberKey()) & Opcodes.ACC_FINAL) != 0
            ? Outcome.broken("changed: now final")
            : Outcome.LINKS;
      }
    }
    for (ClassModel type : hierarchy.interfaces) {
      if (declaresOverridable(type, ref.memberKey())) {
        return Outcome.LINKS;
      }
    }
    return Outcome.broken(
        hierarchy.missing != null
            ? unresolvable(hierarchy.missing)
            : "no longer overridden (no Flink supertype declares it)");
  }

  /** The Flink methods each of our methods overrides here, to re-check on other minors. */
  Set<FlinkReference> overrides(ClassModel ours) {
    Set<FlinkReference> overrides = new TreeSet<>();
    MemberLookup.Hierarchy hierarchy = lookup.hierarchy(ours);
    ours.methods()
        .forEach(
            (method, access) -> {
              if (!overridable(access) || method.startsWith("<")) {
                return;
              }
              for (ClassModel type : hierarchy.classes) {
                if (declaresOverridable(type, method)) {
                  overrides.add(
                      FlinkReference.toInherited(
                          FlinkReference.Kind.OVERRIDE, ours.name(), type.name(), method));
                  return;
                }
              }
              for (ClassModel type : hierarchy.interfaces) {
                if (declaresOverridable(type, method)) {
                  overrides.add(
                      FlinkReference.toInherited(
                          FlinkReference.Kind.OVERRIDE, ours.name(), type.name(), method));
                  return;
                }
              }
            });
    return overrides;
  }

  private static boolean declaresOverridable(ClassModel type, String method) {
    Integer access = type.method(method);
    return FlinkReference.isFlink(type.name()) && access != null && overridable(access);
  }

  private static boolean overridable(int access) {
    return (access & (Opcodes.ACC_PRIVATE | Opcodes.ACC_STATIC)) == 0;
  }

  private static boolean isAccessible(ClassModel target, ClassModel from) {
    return target.isPublic() || target.packageName().equals(from.packageName());
  }

  private boolean isAccessible(ClassModel declaring, int access, ClassModel from) {
    if ((access & Opcodes.ACC_PUBLIC) != 0) {
      return true;
    }
    if ((access & Opcodes.ACC_PRIVATE) != 0) {
      return declaring.name().equals(from.name());
    }
    boolean samePackage = declaring.packageName().equals(from.packageName());
    if ((access & Opcodes.ACC_PROTECTED) != 0) {
      return samePackage || lookup.isSubtype(from, declaring.name());
    }
    return samePackage;
  }

  private static String accessName(int access) {
    if ((access & Opcodes.ACC_PRIVATE) != 0) {
      return "private";
    }
    return (access & Opcodes.ACC_PROTECTED) != 0 ? "protected" : "package-private";
  }

  // A Flink supertype gone on this minor is reported where we name it; any other missing
  // supertype means the checked classpath is incomplete, which must not pass silently.
  private static String unresolvable(String missingSupertype) {
    return FlinkReference.isFlink(missingSupertype)
        ? "unresolvable: supertype " + missingSupertype + " is missing"
        : "unresolvable: supertype "
            + missingSupertype
            + " is not on the checked classpath (add its jar to linkage-check/pom.xml)";
  }
}

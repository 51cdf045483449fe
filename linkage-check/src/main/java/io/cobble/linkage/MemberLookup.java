package io.cobble.linkage;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.objectweb.asm.Opcodes;

/**
 * Field and method resolution as JVMS 5.4.3.2-5.4.3.4 and selection as 5.4.6 define them, over a
 * {@link ClassPathIndex}. A lookup that meets a supertype the index lacks says so, so the checker
 * can fail closed instead of calling the member missing for the wrong reason.
 */
final class MemberLookup {
  private static final String OBJECT = "java/lang/Object";

  private final ClassPathIndex index;

  MemberLookup(ClassPathIndex index) {
    this.index = index;
  }

  /** Where a member was found, or what stood in the way. */
  static final class Result {
    final ClassModel declaringClass;
    final int access;

    /** A supertype on the way that the index lacks; null when the hierarchy was complete. */
    final String missingSupertype;

    private Result(ClassModel declaringClass, int access, String missingSupertype) {
      this.declaringClass = declaringClass;
      this.access = access;
      this.missingSupertype = missingSupertype;
    }

    boolean found() {
      return declaringClass != null;
    }

    boolean isStatic() {
      return (access & Opcodes.ACC_STATIC) != 0;
    }

    boolean isAbstract() {
      return (access & Opcodes.ACC_ABSTRACT) != 0;
    }
  }

  /** JVMS 5.4.3.3 (class owner) and 5.4.3.4 (interface owner); {@code owner} must exist. */
  Result resolveMethod(ClassModel owner, String nameAndDescriptor) {
    Hierarchy hierarchy = new Hierarchy(owner);
    if (owner.isInterface()) {
      Integer access = owner.method(nameAndDescriptor);
      if (access != null) {
        return new Result(owner, access, null);
      }
      ClassModel object = index.find(OBJECT);
      Integer objectMethod = object.method(nameAndDescriptor);
      if (objectMethod != null
          && (objectMethod & Opcodes.ACC_PUBLIC) != 0
          && (objectMethod & Opcodes.ACC_STATIC) == 0) {
        return new Result(object, objectMethod, null);
      }
    } else {
      for (ClassModel c : hierarchy.classes) {
        Integer access = c.method(nameAndDescriptor);
        if (access != null) {
          return new Result(c, access, null);
        }
      }
    }
    for (ClassModel itf : hierarchy.interfaces) {
      Integer access = itf.method(nameAndDescriptor);
      if (access != null && (access & (Opcodes.ACC_PRIVATE | Opcodes.ACC_STATIC)) == 0) {
        return new Result(itf, access, null);
      }
    }
    return new Result(null, 0, hierarchy.missing);
  }

  /** JVMS 5.4.3.2: the class itself, then its superinterfaces, then its superclass, recursively. */
  Result resolveField(ClassModel owner, String nameAndDescriptor) {
    Deque<ClassModel> path = new ArrayDeque<>();
    String missing = null;
    for (ClassModel c = owner; c != null; ) {
      path.add(c);
      if (c.superName() == null) {
        break;
      }
      ClassModel parent = index.find(c.superName());
      if (parent == null) {
        missing = c.superName();
      }
      c = parent;
    }
    for (ClassModel c : path) {
      Integer access = c.field(nameAndDescriptor);
      if (access != null) {
        return new Result(c, access, null);
      }
      Hierarchy interfaces = new Hierarchy(c, false);
      for (ClassModel itf : interfaces.interfaces) {
        Integer itfAccess = itf.field(nameAndDescriptor);
        if (itfAccess != null) {
          return new Result(itf, itfAccess, null);
        }
      }
      if (interfaces.missing != null && missing == null) {
        missing = interfaces.missing;
      }
    }
    return new Result(null, 0, missing);
  }

  /**
   * JVMS 5.4.6: the method an instance of {@code concrete} runs for {@code nameAndDescriptor}. Not
   * found, or found abstract, means the JVM would throw AbstractMethodError.
   */
  Result select(ClassModel concrete, String nameAndDescriptor) {
    Hierarchy hierarchy = new Hierarchy(concrete);
    for (ClassModel c : hierarchy.classes) {
      Integer access = c.method(nameAndDescriptor);
      if (access != null && (access & (Opcodes.ACC_PRIVATE | Opcodes.ACC_STATIC)) == 0) {
        return new Result(c, access, hierarchy.missing);
      }
    }
    List<ClassModel> maximallySpecific = new ArrayList<>();
    for (ClassModel itf : hierarchy.interfaces) {
      Integer access = itf.method(nameAndDescriptor);
      if (access != null && (access & (Opcodes.ACC_PRIVATE | Opcodes.ACC_STATIC)) == 0) {
        maximallySpecific.removeIf(other -> isSubtype(itf, other.name()));
        if (maximallySpecific.stream().noneMatch(other -> isSubtype(other, itf.name()))) {
          maximallySpecific.add(itf);
        }
      }
    }
    ClassModel selected = null;
    for (ClassModel itf : maximallySpecific) {
      int access = itf.method(nameAndDescriptor);
      if ((access & Opcodes.ACC_ABSTRACT) == 0) {
        if (selected != null) {
          // Two unrelated defaults: the JVM throws IncompatibleClassChangeError.
          return new Result(null, 0, hierarchy.missing);
        }
        selected = itf;
      }
    }
    return selected == null
        ? new Result(null, 0, hierarchy.missing)
        : new Result(selected, selected.method(nameAndDescriptor), hierarchy.missing);
  }

  /** Every class and interface above {@code type}, itself included. */
  Hierarchy hierarchy(ClassModel type) {
    return new Hierarchy(type);
  }

  boolean isSubtype(ClassModel type, String superName) {
    Hierarchy hierarchy = new Hierarchy(type);
    return hierarchy.classes.stream().anyMatch(c -> c.name().equals(superName))
        || hierarchy.interfaces.stream().anyMatch(c -> c.name().equals(superName));
  }

  /** A type's superclass chain (itself first) and all its superinterfaces, as far as found. */
  final class Hierarchy {
    final List<ClassModel> classes = new ArrayList<>();
    final Set<ClassModel> interfaces = new LinkedHashSet<>();
    String missing;

    Hierarchy(ClassModel type) {
      this(type, true);
    }

    private Hierarchy(ClassModel type, boolean withSuperclasses) {
      Deque<ClassModel> pendingInterfaces = new ArrayDeque<>();
      for (ClassModel c = type; c != null; ) {
        if (c.isInterface()) {
          pendingInterfaces.add(c);
          break;
        }
        classes.add(c);
        c.interfaces().forEach(name -> enqueue(name, pendingInterfaces));
        if (!withSuperclasses || c.superName() == null) {
          break;
        }
        ClassModel parent = index.find(c.superName());
        if (parent == null) {
          missing = c.superName();
        }
        c = parent;
      }
      while (!pendingInterfaces.isEmpty()) {
        ClassModel itf = pendingInterfaces.poll();
        if (interfaces.add(itf)) {
          itf.interfaces().forEach(name -> enqueue(name, pendingInterfaces));
        }
      }
      if (type.isInterface() && !withSuperclasses) {
        interfaces.remove(type);
      }
    }

    private void enqueue(String name, Deque<ClassModel> pending) {
      ClassModel itf = index.find(name);
      if (itf == null) {
        missing = missing == null ? name : missing;
      } else {
        pending.add(itf);
      }
    }

    /** Whether any type above (or being) the root is a Flink type. */
    boolean touchesFlink() {
      return classes.stream().anyMatch(c -> FlinkReference.isFlink(c.name()))
          || interfaces.stream().anyMatch(c -> FlinkReference.isFlink(c.name()))
          || (missing != null && FlinkReference.isFlink(missing));
    }
  }
}

package io.cobble.linkage;

import java.util.Set;
import java.util.TreeSet;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.FieldVisitor;
import org.objectweb.asm.Handle;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

/**
 * Reads one of our class files and lists what it links against: Flink types it names, and every
 * field and method it reaches (the checker decides which of those end up in Flink).
 *
 * <p>Not collected, because the JVM never resolves them: annotations (a missing annotation class is
 * ignored), generic signatures, {@code throws} clauses, inner-class attributes and debug info.
 */
final class ReferenceCollector extends ClassVisitor {
  private final Set<FlinkReference> references = new TreeSet<>();
  private String className;

  private ReferenceCollector() {
    super(Opcodes.ASM9);
  }

  static Set<FlinkReference> collect(byte[] classFile) {
    ReferenceCollector collector = new ReferenceCollector();
    new ClassReader(classFile).accept(collector, ClassReader.SKIP_DEBUG);
    return collector.references;
  }

  @Override
  public void visit(
      int version,
      int access,
      String name,
      String signature,
      String superName,
      String[] interfaces) {
    className = name;
    if (superName != null && FlinkReference.isFlink(superName)) {
      references.add(FlinkReference.toClass(FlinkReference.Kind.SUPERCLASS, name, superName));
    }
    if (interfaces != null) {
      for (String itf : interfaces) {
        if (FlinkReference.isFlink(itf)) {
          references.add(FlinkReference.toClass(FlinkReference.Kind.INTERFACE, name, itf));
        }
      }
    }
  }

  @Override
  public FieldVisitor visitField(
      int access, String name, String descriptor, String signature, Object value) {
    addType(Type.getType(descriptor));
    return null;
  }

  @Override
  public MethodVisitor visitMethod(
      int access, String name, String descriptor, String signature, String[] exceptions) {
    addType(Type.getMethodType(descriptor));
    return new MethodVisitor(Opcodes.ASM9) {
      @Override
      public void visitTypeInsn(int opcode, String type) {
        addType(type.startsWith("[") ? Type.getType(type) : Type.getObjectType(type));
      }

      @Override
      public void visitMultiANewArrayInsn(String descriptor, int dimensions) {
        addType(Type.getType(descriptor));
      }

      @Override
      public void visitTryCatchBlock(Label start, Label end, Label handler, String type) {
        if (type != null) {
          addType(Type.getObjectType(type));
        }
      }

      @Override
      public void visitLdcInsn(Object value) {
        addConstant(value);
      }

      @Override
      public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
        boolean isStatic = opcode == Opcodes.GETSTATIC || opcode == Opcodes.PUTSTATIC;
        boolean write = opcode == Opcodes.PUTFIELD || opcode == Opcodes.PUTSTATIC;
        references.add(FlinkReference.toField(className, owner, name, descriptor, isStatic, write));
      }

      @Override
      public void visitMethodInsn(
          int opcode, String owner, String name, String descriptor, boolean isInterface) {
        addMethod(owner, name, descriptor, opcode == Opcodes.INVOKESTATIC, isInterface);
      }

      // Method references and lambdas link through their bootstrap arguments, not a call site.
      @Override
      public void visitInvokeDynamicInsn(
          String name, String descriptor, Handle bootstrap, Object... arguments) {
        addType(Type.getMethodType(descriptor));
        addConstant(bootstrap);
        for (Object argument : arguments) {
          addConstant(argument);
        }
      }
    };
  }

  private void addConstant(Object value) {
    if (value instanceof Type) {
      addType((Type) value);
    } else if (value instanceof Handle) {
      addHandle((Handle) value);
    }
  }

  private void addHandle(Handle handle) {
    switch (handle.getTag()) {
      case Opcodes.H_GETFIELD:
      case Opcodes.H_PUTFIELD:
      case Opcodes.H_GETSTATIC:
      case Opcodes.H_PUTSTATIC:
        boolean isStatic =
            handle.getTag() == Opcodes.H_GETSTATIC || handle.getTag() == Opcodes.H_PUTSTATIC;
        boolean write =
            handle.getTag() == Opcodes.H_PUTFIELD || handle.getTag() == Opcodes.H_PUTSTATIC;
        references.add(
            FlinkReference.toField(
                className, handle.getOwner(), handle.getName(), handle.getDesc(), isStatic, write));
        break;
      default:
        addMethod(
            handle.getOwner(),
            handle.getName(),
            handle.getDesc(),
            handle.getTag() == Opcodes.H_INVOKESTATIC,
            handle.isInterface());
    }
  }

  // Methods on arrays (clone) resolve against Object; only the element type can be Flink's.
  private void addMethod(
      String owner, String name, String descriptor, boolean isStatic, boolean isInterface) {
    if (owner.startsWith("[")) {
      addType(Type.getType(owner));
    } else {
      references.add(
          FlinkReference.toMethod(className, owner, name, descriptor, isStatic, isInterface));
    }
  }

  private void addType(Type type) {
    switch (type.getSort()) {
      case Type.ARRAY:
        addType(type.getElementType());
        break;
      case Type.METHOD:
        for (Type argument : type.getArgumentTypes()) {
          addType(argument);
        }
        addType(type.getReturnType());
        break;
      case Type.OBJECT:
        if (FlinkReference.isFlink(type.getInternalName())) {
          references.add(
              FlinkReference.toClass(FlinkReference.Kind.CLASS, className, type.getInternalName()));
        }
        break;
      default:
        break;
    }
  }
}

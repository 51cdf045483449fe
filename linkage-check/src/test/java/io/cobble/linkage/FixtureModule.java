package io.cobble.linkage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * A module of generated classes standing in for one of ours, so that a test can inject exactly the
 * incompatibility it wants without compiling against an old Flink.
 */
final class FixtureModule {
  private final Path root;

  FixtureModule(Path root) {
    this.root = root;
  }

  Path root() {
    return root;
  }

  /** Writes class {@code name}; {@code body} adds its members to the writer. */
  FixtureModule define(
      String name, int access, String superName, String[] interfaces, Consumer<ClassWriter> body) {
    ClassWriter writer = new ClassWriter(ClassWriter.COMPUTE_MAXS);
    writer.visit(Opcodes.V11, access | Opcodes.ACC_SUPER, name, null, superName, interfaces);
    body.accept(writer);
    writer.visitEnd();
    Path file = root.resolve(name + ".class");
    try {
      Files.createDirectories(file.getParent());
      Files.write(file, writer.toByteArray());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /** A public static method whose code {@code code} emits (it must end with a return). */
  static void staticMethod(
      ClassWriter writer, String name, String descriptor, Consumer<MethodVisitor> code) {
    MethodVisitor mv =
        writer.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, name, descriptor, null, null);
    mv.visitCode();
    code.accept(mv);
    mv.visitMaxs(0, 0);
    mv.visitEnd();
  }

  /** A public constructor calling {@code superName}'s no-argument one. */
  static void constructor(ClassWriter writer, String superName) {
    MethodVisitor mv = writer.visitMethod(Opcodes.ACC_PUBLIC, "<init>", "()V", null, null);
    mv.visitCode();
    mv.visitVarInsn(Opcodes.ALOAD, 0);
    mv.visitMethodInsn(Opcodes.INVOKESPECIAL, superName, "<init>", "()V", false);
    mv.visitInsn(Opcodes.RETURN);
    mv.visitMaxs(0, 0);
    mv.visitEnd();
  }

  /** A public instance method returning a default value, standing in for an implementation. */
  static void stubMethod(ClassWriter writer, String name, String descriptor, int returnOpcode) {
    MethodVisitor mv = writer.visitMethod(Opcodes.ACC_PUBLIC, name, descriptor, null, null);
    mv.visitCode();
    if (returnOpcode != Opcodes.RETURN) {
      mv.visitInsn(Opcodes.ACONST_NULL);
    }
    mv.visitInsn(returnOpcode);
    mv.visitMaxs(0, 0);
    mv.visitEnd();
  }
}

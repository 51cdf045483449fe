package io.cobble.linkage;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.FieldVisitor;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/** The part of a class file that linking needs: its kind, supertypes and declared members. */
final class ClassModel {
  private final String name;
  private final int access;
  private final String superName;
  private final List<String> interfaces;
  private final Map<String, Integer> methods;
  private final Map<String, Integer> fields;

  private ClassModel(
      String name,
      int access,
      String superName,
      List<String> interfaces,
      Map<String, Integer> methods,
      Map<String, Integer> fields) {
    this.name = name;
    this.access = access;
    this.superName = superName;
    this.interfaces = interfaces;
    this.methods = methods;
    this.fields = fields;
  }

  static ClassModel parse(byte[] classFile) {
    Map<String, Integer> methods = new HashMap<>();
    Map<String, Integer> fields = new HashMap<>();
    ClassModel[] result = new ClassModel[1];
    new ClassReader(classFile)
        .accept(
            new ClassVisitor(Opcodes.ASM9) {
              @Override
              public void visit(
                  int version,
                  int access,
                  String name,
                  String signature,
                  String superName,
                  String[] interfaces) {
                result[0] =
                    new ClassModel(
                        name,
                        access,
                        superName,
                        interfaces == null
                            ? Collections.emptyList()
                            : Collections.unmodifiableList(Arrays.asList(interfaces)),
                        methods,
                        fields);
              }

              @Override
              public MethodVisitor visitMethod(
                  int access, String name, String descriptor, String signature, String[] ex) {
                methods.put(name + descriptor, access);
                return null;
              }

              @Override
              public FieldVisitor visitField(
                  int access, String name, String descriptor, String signature, Object value) {
                fields.put(name + ":" + descriptor, access);
                return null;
              }
            },
            ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
    return result[0];
  }

  String name() {
    return name;
  }

  /** Null for java/lang/Object only. */
  String superName() {
    return superName;
  }

  List<String> interfaces() {
    return interfaces;
  }

  boolean isInterface() {
    return (access & Opcodes.ACC_INTERFACE) != 0;
  }

  boolean isAbstract() {
    return (access & Opcodes.ACC_ABSTRACT) != 0;
  }

  boolean isFinal() {
    return (access & Opcodes.ACC_FINAL) != 0;
  }

  boolean isPublic() {
    return (access & Opcodes.ACC_PUBLIC) != 0;
  }

  /** Access flags of the method {@code name + descriptor}, or null when not declared here. */
  Integer method(String nameAndDescriptor) {
    return methods.get(nameAndDescriptor);
  }

  Map<String, Integer> methods() {
    return Collections.unmodifiableMap(methods);
  }

  /** Access flags of the field {@code name + ":" + descriptor}, or null when not declared here. */
  Integer field(String nameAndDescriptor) {
    return fields.get(nameAndDescriptor);
  }

  String packageName() {
    int slash = name.lastIndexOf('/');
    return slash < 0 ? "" : name.substring(0, slash);
  }
}

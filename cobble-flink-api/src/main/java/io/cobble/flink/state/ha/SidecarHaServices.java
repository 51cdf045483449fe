package io.cobble.flink.state.ha;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import org.apache.flink.runtime.checkpoint.CheckpointRecoveryFactory;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStore;
import org.apache.flink.runtime.highavailability.HighAvailabilityServices;

/**
 * The delegate's HA services, with each job's completed-checkpoint store wrapped in a {@link
 * SidecarCheckpointStore}. Both interfaces changed between Flink minors (leader election methods;
 * the restore-mode parameter of {@code createRecoveredCompletedCheckpointStore}), so they are
 * wrapped by dynamic proxies that intercept only the two methods by name and pass every other call
 * through: one class serves every Flink line.
 */
public final class SidecarHaServices {

  private static final String RECOVERY_FACTORY = "getCheckpointRecoveryFactory";
  private static final String CREATE_STORE = "createRecoveredCompletedCheckpointStore";

  private SidecarHaServices() {}

  public static HighAvailabilityServices wrap(HighAvailabilityServices delegate) {
    return proxy(
        HighAvailabilityServices.class,
        delegate,
        (method, result) ->
            method.getName().equals(RECOVERY_FACTORY)
                ? proxy(
                    CheckpointRecoveryFactory.class,
                    (CheckpointRecoveryFactory) result,
                    (m, store) ->
                        m.getName().equals(CREATE_STORE)
                            ? new SidecarCheckpointStore((CompletedCheckpointStore) store)
                            : store)
                : result);
  }

  private interface ResultMapper {
    Object map(Method method, Object result);
  }

  private static <T> T proxy(Class<T> type, T delegate, ResultMapper mapper) {
    InvocationHandler handler =
        (p, method, args) -> {
          if (method.getDeclaringClass() == Object.class) {
            if (method.getName().equals("equals")) {
              return p == args[0];
            }
            if (method.getName().equals("hashCode")) {
              return System.identityHashCode(p);
            }
            return "Cobble sidecars over " + delegate;
          }
          Object result;
          try {
            result = method.invoke(delegate, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          return mapper.map(method, result);
        };
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler));
  }
}

package dev.callbench.serve;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Supplier;
import java.util.jar.Attributes;
import java.util.jar.JarFile;

/** {@code --version NAME}: the versions of the libraries the server really loaded, for its manifest. */
public final class Versions {
    private Versions() {}

    /** Prints the version called {@code name} (the first one for ""), or lists the names and exits 2. */
    public static void print(String name, Map<String, Supplier<String>> versions) {
        Supplier<String> version = name.isEmpty() ? versions.values().iterator().next() : versions.get(name);
        if (version == null) {
            ServeArgs.fail("unknown version name '" + name + "' (known: " + String.join(", ", versions.keySet()) + ")");
        }
        System.out.println(version.get());
        System.out.flush();
    }

    /**
     * The version of the jar that holds {@code type}: its package's Implementation-Version, else the
     * Bundle-Version or Implementation-Version of the jar's manifest (protobuf-java has only the former).
     */
    public static String ofJar(Class<?> type) {
        String version = type.getPackage().getImplementationVersion();
        if (version != null) {
            return version;
        }
        try {
            Path jar = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
            try (JarFile file = new JarFile(jar.toFile())) {
                Attributes main = file.getManifest().getMainAttributes();
                version = main.getValue("Bundle-Version");
                return version != null ? version : main.getValue(Attributes.Name.IMPLEMENTATION_VERSION);
            }
        } catch (IOException | URISyntaxException | RuntimeException e) {
            return "unknown (" + e + ")";
        }
    }
}

package callbench.processing;

/** Prints the version of the Jackson databind inside the jar, for callbench's versions record. */
public final class JacksonVersion {
    private JacksonVersion() {}

    public static void main(String[] args) {
        System.out.println(com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION);
    }
}

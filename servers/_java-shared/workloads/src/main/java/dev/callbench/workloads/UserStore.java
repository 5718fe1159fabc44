package dev.callbench.workloads;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** Where auth finds its users: a map parsed once, or the file read and searched on every call. */
public final class UserStore {
    /** One entry of users.json, as in the seed. */
    public record User(long id, String hash) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Mode mode;
    private final Path path;
    private final Map<Long, String> users; // preloaded mode only

    private UserStore(Mode mode, Path path, Map<Long, String> users) {
        this.mode = mode;
        this.path = path;
        this.users = users;
    }

    /** Opens the store; reads and parses the file now in either mode, so a bad file fails at start. */
    public static UserStore open(Path path, Mode mode) throws IOException {
        User[] all = readUsers(path);
        if (mode == Mode.PER_REQUEST) {
            return new UserStore(mode, path, null);
        }
        Map<Long, String> users = new HashMap<>(all.length * 2);
        for (User u : all) {
            users.put(u.id(), u.hash());
        }
        return new UserStore(mode, path, users);
    }

    public Mode mode() {
        return mode;
    }

    /** The auth call: NOT_FOUND for an unknown id, INVALID_ARGUMENT for a bad password. */
    public Auth.Response test(long id, String password) {
        byte[] bytes = Auth.checkPassword(password);
        boolean found;
        if (mode == Mode.PRELOADED) {
            found = users.containsKey(id);
        } else {
            found = false;
            for (User u : readUsersPerCall()) {
                if (u.id() == id) {
                    found = true;
                    break;
                }
            }
        }
        if (!found) {
            throw WorkloadException.notFound("no user with id " + id);
        }
        return new Auth.Response(Auth.sha512Hex(bytes));
    }

    private User[] readUsersPerCall() {
        try {
            return readUsers(path);
        } catch (IOException e) {
            throw WorkloadException.internal("cannot read users: " + e.getMessage());
        }
    }

    private static User[] readUsers(Path path) throws IOException {
        return JSON.readValue(Files.readString(path), User[].class);
    }
}

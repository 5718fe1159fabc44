package dev.callbench.spring;

import dev.callbench.workloads.Limits;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Component;

/**
 * The request body as the contract wants it, before anything reads it: at most 4 MiB (declared or not:
 * chunked bodies are counted as they are read), and a {@code Content-Encoding: gzip} body inflated, at most
 * 4 MiB inflated. A streamed upload ({@code POST /records/upload}) may have 64 MiB, its lines 4 MiB each
 * ({@link RecordsController}). Neither Tomcat nor Spring MVC limits or inflates request bodies.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class RequestBodyFilter extends org.springframework.web.filter.OncePerRequestFilter {

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long limit = RecordsController.UPLOAD_PATH.equals(request.getRequestURI())
                ? Limits.MAX_UPLOAD_BYTES : Limits.MAX_BODY_BYTES;
        if (request.getContentLengthLong() > limit) {
            // Refused before reading: Tomcat then swallows (or, past its max-swallow-size, drops) the body.
            reject(response, 413, "RESOURCE_EXHAUSTED", "the body is larger than " + limit + " bytes");
            return;
        }
        String encoding = request.getHeader(HttpHeaders.CONTENT_ENCODING);
        boolean gzip = "gzip".equalsIgnoreCase(encoding);
        if (encoding != null && !gzip && !"identity".equalsIgnoreCase(encoding)) {
            reject(response, 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Encoding must be gzip or identity");
            return;
        }
        boolean hasBody = request.getContentLengthLong() > 0 || request.getHeader(HttpHeaders.TRANSFER_ENCODING) != null;
        chain.doFilter(hasBody ? new BoundedBodyRequest(request, gzip, limit) : request, response);
    }

    private static void reject(HttpServletResponse response, int status, String code, String message)
            throws IOException {
        response.setStatus(status);
        response.setContentType("application/json");
        response.getWriter().write("{\"error\":{\"code\":\"" + code + "\",\"message\":\"" + message + "\"}}");
    }
}

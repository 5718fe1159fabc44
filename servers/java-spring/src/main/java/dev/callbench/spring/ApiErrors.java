package dev.callbench.spring;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.callbench.workloads.WorkloadException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.NoHandlerFoundException;

/**
 * Every error as the contract's status and body {@code {"error": {"code", "message"}}}. Spring's own answers
 * carry Boot's error JSON instead, and a body over the limit is no error to Spring at all.
 */
@RestControllerAdvice
class ApiErrors {

    record ErrorBody(Error error) {
        record Error(String code, String message) {}
    }

    static ResponseEntity<ErrorBody> error(HttpStatus status, String code, String message) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON)
                .body(new ErrorBody(new ErrorBody.Error(code, message)));
    }

    @ExceptionHandler(WorkloadException.class)
    ResponseEntity<ErrorBody> workload(WorkloadException e) {
        return error(HttpStatus.valueOf(e.kind().httpStatus()), e.kind().name(), e.getMessage());
    }

    /** Malformed JSON, wrong types, missing fields, invalid UTF-8, an empty body; or a body over 4 MiB. */
    @ExceptionHandler(HttpMessageNotReadableException.class)
    ResponseEntity<ErrorBody> unreadable(HttpMessageNotReadableException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BodyTooLargeException) {
                return error(HttpStatus.PAYLOAD_TOO_LARGE, "RESOURCE_EXHAUSTED", t.getMessage());
            }
        }
        // Jackson's own words without the location suffix; Spring's would name the handler method.
        String message = e.getMostSpecificCause() instanceof JsonProcessingException json
                ? json.getOriginalMessage() : "the body is missing or not readable";
        return error(HttpStatus.BAD_REQUEST, "INVALID_ARGUMENT", message);
    }

    /** {@code PUT /auth/abc}: Spring's conversion of the path variable failed. */
    @ExceptionHandler(MethodArgumentTypeMismatchException.class)
    ResponseEntity<ErrorBody> badPath(MethodArgumentTypeMismatchException e) {
        return error(HttpStatus.BAD_REQUEST, "INVALID_ARGUMENT", "'" + e.getName() + "' must be an integer");
    }

    /** A body the handler reads itself (a streamed upload) past its limit, or one of its lines past 4 MiB. */
    @ExceptionHandler(BodyTooLargeException.class)
    ResponseEntity<ErrorBody> tooLarge(BodyTooLargeException e) {
        return error(HttpStatus.PAYLOAD_TOO_LARGE, "RESOURCE_EXHAUSTED", e.getMessage());
    }

    @ExceptionHandler(HttpMediaTypeNotSupportedException.class)
    ResponseEntity<ErrorBody> mediaType(HttpMediaTypeNotSupportedException e) {
        String expected = e.getSupportedMediaTypes().isEmpty() ? MediaType.APPLICATION_JSON_VALUE
                : e.getSupportedMediaTypes().get(0).toString();
        return error(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be " + expected);
    }

    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    ResponseEntity<ErrorBody> method(HttpRequestMethodNotSupportedException e) {
        ResponseEntity<ErrorBody> response =
                error(HttpStatus.METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "method not allowed");
        HttpHeaders headers = new HttpHeaders();
        headers.putAll(response.getHeaders());
        headers.setAllow(e.getSupportedHttpMethods());
        return new ResponseEntity<>(response.getBody(), headers, response.getStatusCode());
    }

    /** No route: the dispatcher throws this as static resources are off (application.properties). */
    @ExceptionHandler(NoHandlerFoundException.class)
    ResponseEntity<ErrorBody> notFound(NoHandlerFoundException e) {
        return error(HttpStatus.NOT_FOUND, "NOT_FOUND", "no such route");
    }
}

package dev.callbench.spring;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import org.springframework.boot.autoconfigure.jackson.Jackson2ObjectMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Jackson as strict as the contract: a JSON value of the wrong type is 400. Jackson's defaults coerce
 * {@code "2012"} to 2012, 42 to {@code "42"}, 2012.5 to 2012 and 1 to an enum, and ignore trailing data.
 * Unknown fields stay ignored (Spring Boot's default, and the contract's).
 */
@Configuration(proxyBeanMethods = false)
class StrictJson {

    @Bean
    Jackson2ObjectMapperBuilderCustomizer strictJsonTypes() {
        return builder -> builder
                .featuresToDisable(
                        MapperFeature.ALLOW_COERCION_OF_SCALARS, // "2012" -> 2012, "true" -> true
                        DeserializationFeature.ACCEPT_FLOAT_AS_INT) // 2012.5 -> 2012
                .featuresToEnable(
                        DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS, // "kind": 1 -> KIND_SMALL
                        DeserializationFeature.FAIL_ON_TRAILING_TOKENS) // {...} garbage
                .postConfigurer(mapper -> mapper.coercionConfigFor(LogicalType.Textual) // 42 -> "42"
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail));
    }
}

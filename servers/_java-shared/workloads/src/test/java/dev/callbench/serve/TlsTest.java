package dev.callbench.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class TlsTest {
    @Test
    void aSelfSignedCertificateForTheLoopbackNamesAndItsKey() throws Exception {
        Tls.Pem pem = Tls.selfSigned();
        X509Certificate cert = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.cert().getBytes(StandardCharsets.US_ASCII)));
        cert.verify(cert.getPublicKey()); // self-signed
        Set<String> names = cert.getSubjectAlternativeNames().stream()
                .map(entry -> (String) ((List<?>) entry).get(1))
                .collect(Collectors.toSet());
        assertEquals(Set.of("localhost", "127.0.0.1", "0:0:0:0:0:0:0:1"), names);
        assertEquals("EC", cert.getPublicKey().getAlgorithm());

        // The key is the certificate's (PKCS#8, as Tomcat's PEM bundle and Netty read it).
        String base64 = pem.key().replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        PrivateKey key = KeyFactory.getInstance("EC")
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
        byte[] data = "callbench".getBytes(StandardCharsets.US_ASCII);
        Signature signer = Signature.getInstance("SHA256withECDSA");
        signer.initSign(key);
        signer.update(data);
        byte[] signature = signer.sign();
        Signature verifier = Signature.getInstance("SHA256withECDSA");
        verifier.initVerify(cert);
        verifier.update(data);
        assertTrue(verifier.verify(signature));
    }

    @Test
    void everyStartMakesANewOne() {
        assertNotEquals(Tls.selfSigned().cert(), Tls.selfSigned().cert());
    }
}

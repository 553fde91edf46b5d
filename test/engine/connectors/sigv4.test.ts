import { describe, expect, it } from "vitest";
import {
  canonicalRequest,
  credentialScope,
  EMPTY_PAYLOAD_SHA256,
  signature,
  signRequest,
  stringToSign,
} from "../../../src/engine/connectors/sigv4.js";

describe("AWS Signature Version 4", () => {
  it("reproduces the SigV4 test suite's get-vanilla signature", () => {
    const amzDate = "20150830T123600Z";
    const { request, signedHeaders } = canonicalRequest({
      method: "GET",
      path: "/",
      query: "",
      headers: { Host: "example.amazonaws.com", "X-Amz-Date": amzDate },
      payloadHash: EMPTY_PAYLOAD_SHA256,
    });
    expect(request).toBe(
      "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" +
        EMPTY_PAYLOAD_SHA256,
    );
    expect(signedHeaders).toBe("host;x-amz-date");
    const scope = credentialScope(amzDate, "us-east-1", "service");
    const toSign = stringToSign(amzDate, scope, request);
    expect(toSign).toBe(
      "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
    );
    expect(
      signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", amzDate, "us-east-1", "service", toSign),
    ).toBe("5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  });

  it("signs a whole request into the get-vanilla Authorization header", () => {
    const headers = signRequest(
      { method: "GET", url: new URL("https://example.amazonaws.com/") },
      {
        credentials: {
          accessKeyId: "AKIDEXAMPLE",
          secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        },
        region: "us-east-1",
        service: "service",
        date: new Date("2015-08-30T12:36:00Z"),
      },
    );
    expect(headers.authorization).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
    );
    expect(headers["x-amz-date"]).toBe("20150830T123600Z");
  });

  it("reproduces the S3 documentation's GET Object example signature", () => {
    // docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html, "Example: GET Object".
    const headers = signRequest(
      {
        method: "GET",
        url: new URL("https://examplebucket.s3.amazonaws.com/test.txt"),
        headers: { Range: "bytes=0-9" },
      },
      {
        credentials: {
          accessKeyId: "AKIAIOSFODNN7EXAMPLE",
          secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        },
        region: "us-east-1",
        service: "s3",
        date: new Date("2013-05-24T00:00:00Z"),
        contentSha256Header: true,
      },
    );
    expect(headers.authorization).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
    );
  });

  it("reproduces the S3 documentation's GET Bucket (list objects) example signature", () => {
    const headers = signRequest(
      { method: "GET", url: new URL("https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J") },
      {
        credentials: {
          accessKeyId: "AKIAIOSFODNN7EXAMPLE",
          secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        },
        region: "us-east-1",
        service: "s3",
        date: new Date("2013-05-24T00:00:00Z"),
        contentSha256Header: true,
      },
    );
    expect(headers.authorization).toContain(
      "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
    );
  });
});

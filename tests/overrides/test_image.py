"""Docker reference parsing and the imageOverrider component rewrite (semantics §9.3)."""
import pytest

from karmactl.overrides import ImageError, override_image, parse_image

SHA = "sha256:" + "a" * 64

PARSE_CASES = [
    ("bare-name", "nginx", ("", "nginx", "", "")),
    ("name-tag", "nginx:1.19", ("", "nginx", "1.19", "")),
    ("library-path-no-registry", "library/nginx:latest", ("", "library/nginx", "latest", "")),
    ("docker-io-not-normalised", "docker.io/library/nginx", ("docker.io", "library/nginx", "", "")),
    ("registry-with-port", "fictional.registry.example:10443/karmada/cm:v1.0.0",
     ("fictional.registry.example:10443", "karmada/cm", "v1.0.0", "")),
    ("localhost", "localhost/app", ("localhost", "app", "", "")),
    ("localhost-port", "localhost:5000/app:dev", ("localhost:5000", "app", "dev", "")),
    ("digest", "registry.k8s.io/pause@" + SHA, ("registry.k8s.io", "pause", "", SHA)),
    ("tag-and-digest-keeps-tag", "nginx:1.0@" + SHA, ("", "nginx", "1.0", "")),
]


@pytest.mark.parametrize("image,expected", [c[1:] for c in PARSE_CASES], ids=[c[0] for c in PARSE_CASES])
def test_parse(image, expected):
    comp = parse_image(image)
    assert (comp.hostname, comp.repository, comp.tag, comp.digest) == expected


@pytest.mark.parametrize("image", [
    "", "NGINX", "nginx:", "nginx@sha256:abc", "nginx@md5:" + "a" * 32, "-bad", "a/" + "b" * 256,
], ids=["empty", "uppercase", "empty-tag", "short-digest", "unknown-algorithm", "leading-dash", "too-long"])
def test_parse_errors(image):
    with pytest.raises(ImageError):
        parse_image(image)


def ov(component, operator, value=""):
    return {"component": component, "operator": operator, "value": value}


OVERRIDE_CASES = [
    ("registry-replace", "nginx:1.0", ov("Registry", "replace", "fictional.registry.us"),
     "fictional.registry.us/nginx:1.0"),
    ("registry-add-appends", "registry.k8s.io/pause:3.9", ov("Registry", "add", "-mirror"),
     "registry.k8s.io-mirror/pause:3.9"),
    ("registry-remove", "registry.k8s.io/pause:3.9", ov("Registry", "remove"), "pause:3.9"),
    ("repository-replace", "docker.io/library/nginx:1", ov("Repository", "replace", "team/web"), "docker.io/team/web:1"),
    ("repository-add", "nginx:1", ov("Repository", "add", "-slim"), "nginx-slim:1"),
    ("repository-remove", "reg.io/nginx:1", ov("Repository", "remove"), "reg.io/:1"),
    ("tag-replace", "nginx:1.0", ov("Tag", "replace", "2.0"), "nginx:2.0"),
    ("tag-add", "nginx:1.0", ov("Tag", "add", "-alpine"), "nginx:1.0-alpine"),
    ("tag-add-without-tag", "nginx", ov("Tag", "add", "latest"), "nginx:latest"),
    ("tag-remove", "nginx:1.0", ov("Tag", "remove"), "nginx"),
    ("tag-replace-drops-digest", "nginx@" + SHA, ov("Tag", "replace", "v1"), "nginx:v1"),
    ("digest-replace-drops-tag", "nginx:v1", ov("Tag", "replace", SHA), "nginx@" + SHA),
    ("tag-remove-clears-digest", "nginx@" + SHA, ov("Tag", "remove"), "nginx"),
    ("invalid-tag-ignored", "nginx:1.0", ov("Tag", "replace", "not a tag!"), "nginx:1.0"),
    ("unknown-operator-no-op", "nginx:1.0", ov("Registry", "upsert", "x.io"), "nginx:1.0"),
]


@pytest.mark.parametrize("image,overrider,expected", [c[1:] for c in OVERRIDE_CASES],
                         ids=[c[0] for c in OVERRIDE_CASES])
def test_override_image(image, overrider, expected):
    assert override_image(image, overrider) == expected


def test_unknown_component():
    with pytest.raises(ImageError, match="unsupported image component"):
        override_image("nginx", ov("Name", "replace", "x"))


def test_unparseable_image():
    with pytest.raises(ImageError, match="failed to parse image value"):
        override_image("Bad Image", ov("Registry", "replace", "x.io"))

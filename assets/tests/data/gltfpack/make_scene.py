"""Writes scene.glb: a textured, lit cube, a red cube, and an alpha-masked leaf card in front
of them (a checker of opaque and clear texels), seen through the file's camera."""
import json, struct, zlib, sys

def png(width, height, pixel):
    rows = b"".join(b"\0" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))

def floats(values): return struct.pack("<%df" % len(values), *values)
def shorts(values): return struct.pack("<%dH" % len(values), *values)

# A unit cube with one quad per face: positions, normals, uvs.
faces = [((1,0,0),(0,1,0),(0,0,1)), ((-1,0,0),(0,0,1),(0,1,0)), ((0,1,0),(0,0,1),(1,0,0)),
         ((0,-1,0),(1,0,0),(0,0,1)), ((0,0,1),(1,0,0),(0,1,0)), ((0,0,-1),(0,1,0),(1,0,0))]
cube_p, cube_n, cube_uv, cube_i = [], [], [], []
for n, u, v in faces:
    base = len(cube_p) // 3
    for (a, b) in [(-1,-1),(1,-1),(1,1),(-1,1)]:
        cube_p += [0.5 * (n[k] + a * u[k] + b * v[k]) for k in range(3)]
        cube_n += list(n)
        cube_uv += [(a + 1) / 2, 1 - (b + 1) / 2]
    cube_i += [base, base + 1, base + 2, base, base + 2, base + 3]
quad_p = [-2,-2,0, 2,-2,0, 2,2,0, -2,2,0]
quad_n = [0,0,1] * 4
quad_uv = [0,1, 1,1, 1,0, 0,0]
quad_i = [0,1,2, 0,2,3]

leaf = png(16, 16, lambda x, y: (60, 200, 80, 255) if (x // 4 + y // 4) % 2 == 0 else (60, 200, 80, 0))
crate = png(32, 32, lambda x, y: (200, 140, 60, 255) if (x // 8 + y // 8) % 2 == 0 else (90, 60, 30, 255))

bin_, views = b"", []
def view(data, target=None):
    global bin_
    entry = {"buffer": 0, "byteOffset": len(bin_), "byteLength": len(data)}
    if target: entry["target"] = target
    views.append(entry)
    bin_ += data + b"\0" * (-len(data) % 4)
    return len(views) - 1
accessors = []
def accessor(data, kind, count, component, target, bounds=None):
    index = {"bufferView": view(data, target), "componentType": component, "count": count, "type": kind}
    if bounds: index["min"], index["max"] = bounds
    accessors.append(index)
    return len(accessors) - 1
def bounds(values):
    xs = [values[i::3] for i in range(3)]
    return [min(x) for x in xs], [max(x) for x in xs]
A, E = 34962, 34963
cp = accessor(floats(cube_p), "VEC3", 24, 5126, A, bounds(cube_p))
cn = accessor(floats(cube_n), "VEC3", 24, 5126, A)
cu = accessor(floats(cube_uv), "VEC2", 24, 5126, A)
ci = accessor(shorts(cube_i), "SCALAR", 36, 5123, E)
qp = accessor(floats(quad_p), "VEC3", 4, 5126, A, bounds(quad_p))
qn = accessor(floats(quad_n), "VEC3", 4, 5126, A)
qu = accessor(floats(quad_uv), "VEC2", 4, 5126, A)
qi = accessor(shorts(quad_i), "SCALAR", 6, 5123, E)
leaf_view, crate_view = view(leaf), view(crate)
document = {
    "asset": {"version": "2.0", "generator": "make_scene.py"},
    "scene": 0,
    "scenes": [{"nodes": [0, 1, 2, 3]}],
    "nodes": [
        {"name": "crate", "mesh": 0, "translation": [-1.2, 0, -3], "rotation": [0.2, 0.3, 0, 0.932738]},
        {"name": "red cube", "mesh": 1, "translation": [1.2, 0.2, -3.5], "scale": [1.2, 1.2, 1.2]},
        {"name": "leaf", "mesh": 2, "translation": [0, 0, 0]},
        {"name": "camera", "camera": 0, "translation": [0.3, 0.4, 6.0]},
    ],
    "cameras": [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1, "aspectRatio": 1.5}}],
    "meshes": [
        {"primitives": [{"attributes": {"POSITION": cp, "NORMAL": cn, "TEXCOORD_0": cu}, "indices": ci, "material": 0}]},
        {"primitives": [{"attributes": {"POSITION": cp, "NORMAL": cn}, "indices": ci, "material": 1}]},
        {"primitives": [{"attributes": {"POSITION": qp, "NORMAL": qn, "TEXCOORD_0": qu}, "indices": qi, "material": 2}]},
    ],
    "materials": [
        {"name": "crate", "pbrMetallicRoughness": {"baseColorTexture": {"index": 1}}},
        {"name": "red", "pbrMetallicRoughness": {"baseColorFactor": [1, 0, 0, 1]}},
        {"name": "leaf", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}, "alphaMode": "MASK",
         "alphaCutoff": 0.5, "doubleSided": True},
    ],
    "samplers": [{"magFilter": 9728, "minFilter": 9986}, {"magFilter": 9729, "minFilter": 9987}],
    "textures": [{"source": 0, "sampler": 0}, {"source": 1, "sampler": 1}],
    "images": [{"name": "leaf", "bufferView": leaf_view, "mimeType": "image/png"},
               {"name": "crate", "bufferView": crate_view, "mimeType": "image/png"}],
    "buffers": [{"byteLength": len(bin_)}],
    "bufferViews": views,
    "accessors": accessors,
}
text = json.dumps(document, separators=(",", ":")).encode()
text += b" " * (-len(text) % 4)
glb = struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(text) + 8 + len(bin_))
glb += struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(bin_), 0x004E4942) + bin_
open(sys.argv[1] if len(sys.argv) > 1 else "scene.glb", "wb").write(glb)

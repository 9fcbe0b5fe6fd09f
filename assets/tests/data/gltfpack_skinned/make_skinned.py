"""Writes skinned.glb: a square limb three units long up the y axis (13 rings of 4 vertices,
smooth normals) skinned to three joints, shoulder, elbow and wrist, one unit apart; the three
rings around the elbow and the three around the wrist blend two joints. A one-second LINEAR
clip bends the elbow 90 degrees about z and turns the wrist -60 degrees about x, so posed
vertices leave the bind pose."""
import json, math, struct, sys

def floats(values): return struct.pack("<%df" % len(values), *values)
def shorts(values): return struct.pack("<%dH" % len(values), *values)

X0 = 0.3          # the limb's axis sits at x = 0.3 (the shoulder's translation)
HALF = 0.1        # half the limb's width
RINGS = 13        # one every quarter unit, y = 0 .. 3
# The skin lists its joints out of parent order: elbow = 0, shoulder = 1, wrist = 2.
ELBOW, SHOULDER, WRIST = 0, 1, 2

def influences(y):
    """(joints, weights) of a ring at height y: a linear blend one unit wide at each joint."""
    def ramp(centre): return min(max(y - (centre - 0.5), 0.0), 1.0)
    elbow, wrist = ramp(1.0), ramp(2.0)
    if wrist > 0.0:
        joints, weights = [WRIST, ELBOW, 0, 0], [wrist, 1.0 - wrist, 0.0, 0.0]
    else:
        joints, weights = [ELBOW, SHOULDER, 0, 0], [elbow, 1.0 - elbow, 0.0, 0.0]
    # A joint without weight is 0, as the validator wants.
    return [joint if weight > 0.0 else 0 for joint, weight in zip(joints, weights)], weights

positions, normals, joints, weights, indices = [], [], [], [], []
corners = [(-1, -1), (1, -1), (1, 1), (-1, 1)]
for ring in range(RINGS):
    y = ring * 0.25
    joint, weight = influences(y)
    for (a, b) in corners:
        positions += [X0 + a * HALF, y, b * HALF]
        normals += [a / math.sqrt(2), 0.0, b / math.sqrt(2)]
        joints += joint
        weights += weight
for ring in range(RINGS - 1):
    for side in range(4):
        a, b = ring * 4 + side, ring * 4 + (side + 1) % 4
        c, d = a + 4, b + 4
        indices += [a, c, b, b, c, d]
# The end caps, so the limb is closed.
indices += [0, 1, 2, 0, 2, 3]
top = (RINGS - 1) * 4
indices += [top, top + 2, top + 1, top, top + 3, top + 2]

def translation(x, y, z):
    return [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, x, y, z, 1]  # column-major
# Joints' bind positions: shoulder (X0, 0, 0), elbow one up, wrist two up.
binds = [None] * 3
binds[SHOULDER], binds[ELBOW], binds[WRIST] = translation(-X0, 0, 0), translation(-X0, -1, 0), translation(-X0, -2, 0)

def quat(axis, degrees):
    s = math.sin(math.radians(degrees) / 2)
    return [axis[0] * s, axis[1] * s, axis[2] * s, math.cos(math.radians(degrees) / 2)]
times = [0.0, 0.5, 1.0]
elbow_keys = quat((0, 0, 1), 0) + quat((0, 0, 1), 45) + quat((0, 0, 1), 90)
wrist_keys = quat((1, 0, 0), 0) + quat((1, 0, 0), -20) + quat((1, 0, 0), -60)

bin_, views = b"", []
def view(data, target=None):
    global bin_
    entry = {"buffer": 0, "byteOffset": len(bin_), "byteLength": len(data)}
    if target: entry["target"] = target
    views.append(entry)
    bin_ += data + b"\0" * (-len(data) % 4)
    return len(views) - 1
accessors = []
def accessor(data, kind, count, component, target=None, bounds=None):
    index = {"bufferView": view(data, target), "componentType": component, "count": count, "type": kind}
    if bounds: index["min"], index["max"] = bounds
    accessors.append(index)
    return len(accessors) - 1
def bounds(values, width):
    columns = [values[i::width] for i in range(width)]
    return [min(c) for c in columns], [max(c) for c in columns]
A, E = 34962, 34963
count = len(positions) // 3
p = accessor(floats(positions), "VEC3", count, 5126, A, bounds(positions, 3))
n = accessor(floats(normals), "VEC3", count, 5126, A)
j = accessor(bytes(joints), "VEC4", count, 5121, A)
w = accessor(floats(weights), "VEC4", count, 5126, A)
i = accessor(shorts(indices), "SCALAR", len(indices), 5123, E)
ibm = accessor(floats(sum(binds, [])), "MAT4", 3, 5126)
t = accessor(floats(times), "SCALAR", 3, 5126, bounds=bounds(times, 1))
ek = accessor(floats(elbow_keys), "VEC4", 3, 5126)
wk = accessor(floats(wrist_keys), "VEC4", 3, 5126)
document = {
    "asset": {"version": "2.0", "generator": "make_skinned.py"},
    "scene": 0,
    "scenes": [{"nodes": [0, 1]}],
    "nodes": [
        {"name": "limb", "mesh": 0, "skin": 0},
        {"name": "shoulder", "translation": [X0, 0, 0], "children": [2]},
        {"name": "elbow", "translation": [0, 1, 0], "children": [3]},
        {"name": "wrist", "translation": [0, 1, 0]},
    ],
    "skins": [{"name": "arm", "joints": [2, 1, 3], "skeleton": 1, "inverseBindMatrices": ibm}],
    "meshes": [{"name": "limb", "primitives": [{"attributes": {"POSITION": p, "NORMAL": n, "JOINTS_0": j,
                                                               "WEIGHTS_0": w}, "indices": i}]}],
    "animations": [{"name": "wave",
                    "samplers": [{"input": t, "output": ek, "interpolation": "LINEAR"},
                                 {"input": t, "output": wk, "interpolation": "LINEAR"}],
                    "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}},
                                 {"sampler": 1, "target": {"node": 3, "path": "rotation"}}]}],
    "buffers": [{"byteLength": len(bin_)}],
    "bufferViews": views,
    "accessors": accessors,
}
text = json.dumps(document, separators=(",", ":")).encode()
text += b" " * (-len(text) % 4)
glb = struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(text) + 8 + len(bin_))
glb += struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(bin_), 0x004E4942) + bin_
open(sys.argv[1] if len(sys.argv) > 1 else "skinned.glb", "wb").write(glb)

// The materials of the scene passes: the table `materials` (binding 4), indexed by an object
// record's `material`, and the base-colour textures `material_textures` (binding 5, one
// layer each of an sRGB image array, trilinear and repeating). Host twin:
// renderer/src/scene/materials.rs (`GpuMaterial`). A vertex shader defines
// MATERIAL_TABLE_ONLY first: it reads the flags, never a texture.
#ifndef ENGINE_MATERIAL_H
#define ENGINE_MATERIAL_H
struct Material {
    uint texture;
    uint flags;
    float cutoff;
    // The finest mip sampled: 0 once every mip is on the GPU; while a texture added at run
    // time streams in (smallest mips first), the finest one that arrived.
    uint min_lod;
};

#define MATERIAL_NO_TEXTURE 0xffffffffu
#define MATERIAL_MASKED 1u
#define MATERIAL_BLENDED 32u
#define MATERIAL_DOUBLE_SIDED 64u
#define MATERIAL_NEAREST 128u

layout(std430, set = 0, binding = 4) readonly buffer Materials {
    Material materials[];
};

// The flags of material `index`; 0 (opaque, one-sided) past the table.
uint material_flags(uint index) {
    return index < uint(materials.length()) ? materials[index].flags : 0u;
}

#ifndef MATERIAL_TABLE_ONLY
layout(set = 0, binding = 5) uniform sampler2DArray material_textures;

// One axis of `uv` addressed by `wrap` (0 repeat, 1 mirrored repeat, 2 clamp); the sampler
// repeats, so repeat needs nothing.
float material_wrap(float coordinate, uint wrap) {
    if (wrap == 1u) {
        float period = mod(coordinate, 2.0);
        return period > 1.0 ? 2.0 - period : period;
    }
    if (wrap == 2u) {
        return clamp(coordinate, 0.0, 1.0);
    }
    return coordinate;
}

// The base colour of material `index` at `uv`: the texture's texel (white without one).
// Derivatives are taken of the unwrapped coordinates, so a mirror or clamp seam picks the
// same mip as its neighbours.
vec4 material_texel(uint index, vec2 uv) {
    if (index >= uint(materials.length())) {
        return vec4(1.0);
    }
    Material material = materials[index];
    if (material.texture == MATERIAL_NO_TEXTURE) {
        return vec4(1.0);
    }
    vec2 wrapped = vec2(material_wrap(uv.x, (material.flags >> 1) & 3u), material_wrap(uv.y, (material.flags >> 3) & 3u));
    if ((material.flags & MATERIAL_NEAREST) != 0u) {
        // The nearest mip of the footprint (as the trilinear sampler measures it), then
        // its nearest texel; repeat wraps the texel index, as the sampler would.
        int levels = textureQueryLevels(material_textures);
        float lod = textureQueryLod(material_textures, uv).y;
        int level = clamp(int(floor(lod + 0.5)), int(material.min_lod), levels - 1);
        ivec2 size = textureSize(material_textures, level).xy;
        ivec2 texel = ivec2(floor(wrapped * vec2(size)));
        texel = ((texel % size) + size) % size;
        return texelFetch(material_textures, ivec3(texel, int(material.texture)), level);
    }
    if (material.min_lod != 0u) {
        // Mips finer than min_lod hold no texels yet: sample the finest that does.
        float lod = max(textureQueryLod(material_textures, uv).y, float(material.min_lod));
        return textureLod(material_textures, vec3(wrapped, float(material.texture)), lod);
    }
    return textureGrad(material_textures, vec3(wrapped, float(material.texture)), dFdx(uv), dFdy(uv));
}

// Whether alpha `alpha` of material `index` is a hole of its mask.
bool material_hole(uint index, float alpha) {
    if (index >= uint(materials.length())) {
        return false;
    }
    Material material = materials[index];
    return (material.flags & MATERIAL_MASKED) != 0u && alpha < material.cutoff;
}

// Whether material `index` cuts holes (its fragments must sample before they are kept).
bool material_masked(uint index) {
    return (material_flags(index) & MATERIAL_MASKED) != 0u;
}
#endif
#endif

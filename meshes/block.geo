// A block (0,2)x(0,1)x(0,1) of hexahedra: a transfinite, recombined
// rectangle extruded in layers.  Physical surfaces name the boundary parts
// that -bc_dirichlet/-bc_neumann take: inlet x = 0, outlet x = 2, walls.
// Regenerate: gmsh block.geo -3 -format inp -o block.inp
SetFactory("Built-in");
Point(1) = {0, 0, 0}; Point(2) = {2, 0, 0}; Point(3) = {2, 1, 0}; Point(4) = {0, 1, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = 5;
Transfinite Curve{2, 4} = 3;
Transfinite Surface{1};
Recombine Surface{1};
out[] = Extrude {0, 0, 1} { Surface{1}; Layers{2}; Recombine; };
// out[0] top, out[1] volume, out[2..5] the sides on lines 1..4
Physical Surface("inlet") = {out[5]};
Physical Surface("outlet") = {out[3]};
Physical Surface("walls") = {1, out[0], out[2], out[4]};
Physical Volume("block") = {out[1]};

module.exports = {
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs)/)'],
};
